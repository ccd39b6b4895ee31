import { type Handler, jsonResponse, type Route, Router } from "@mesh/shared/http/router";
import { loopbackOnly } from "@mesh/shared/http/serve";

/** Debug paths that reveal the environment, the full config or what proxies were sent: loopback only by default. */
export const SENSITIVE_DEBUG_PATHS: readonly string[] = [
  "/debug/configz",
  "/debug/analyzez",
  "/debug/env",
  "/debug/mesh",
  "/debug/config_dump",
  "/debug/edsz",
  "/debug/overview",
];

/** Methods the mounted `/debug/` prefix forwards; the debug router answers 405 for those a path does not take. */
const FORWARDED_METHODS = ["GET", "POST", "PUT", "DELETE"];

/**
 * The debug interface: one router holding every `/debug/...` path, mounted on as many servers as serve it
 * (the HTTP port when ENABLE_DEBUG_ON_HTTP, and the monitoring port). A path added at any time, before or
 * after mounting, is served everywhere and listed by the `/debug` index, so a module adds a path with one call:
 * `debug.add("/debug/adsz", "Connected proxies", handler)` or `addXdsDebugRoutes(debug.router, ...)`.
 */
export class DebugInterface {
  /** The router of the debug paths; every path starts with `/debug/`. */
  readonly router: Router = new Router();
  readonly #allowRemote: boolean;

  /**
   * `allowRemote` (`DEBUG_REMOTE_ACCESS`) lets callers other than loopback read the paths that reveal the
   * environment or the full config ({@link SENSITIVE_DEBUG_PATHS}); off by default.
   */
  constructor(options: { readonly allowRemote?: boolean } = {}) {
    this.#allowRemote = options.allowRemote ?? false;
  }

  /** Registers a debug path with its one-line help. */
  add(path: string, help: string, handler: Handler, methods?: string[]): this {
    if (!path.startsWith("/debug/")) {
      throw new TypeError(`Debug path "${path}" must start with "/debug/"`);
    }
    this.router.add(path, help, handler, methods);
    return this;
  }

  /** The debug paths, sorted. */
  routes(): Route[] {
    return this.router.routes();
  }

  /**
   * Serves the debug paths on `outer`: `/debug` answers the index (the debug paths and `outer`'s own paths, one
   * line of help each) and every `/debug/...` request goes to the debug router.
   */
  mount(outer: Router): Router {
    outer.add("/debug", "This index: every path with one line of help", () => {
      const paths = [...this.routes(), ...outer.routes().filter((r) => r.path !== "/debug/")]
        .sort((a, b) => a.path.localeCompare(b.path))
        .map((r) => ({ path: r.path, methods: r.methods, help: r.help }));
      return jsonResponse({ paths });
    });
    const guarded = loopbackOnly((request) => this.router.handle(request), this.#allowRemote);
    outer.add(
      "/debug/",
      "Debug paths (listed by /debug)",
      (request, url) =>
        SENSITIVE_DEBUG_PATHS.includes(url.pathname) ? guarded(request) : this.router.handle(request),
      FORWARDED_METHODS,
    );
    return outer;
  }
}
