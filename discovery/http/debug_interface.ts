import { type Handler, jsonResponse, type Route, Router } from "@mesh/shared/http/router";
import { loopbackOnly } from "@mesh/shared/http/serve";
import { ResponseBound, streamInPieces } from "@mesh/shared/http/response_bound";

/**
 * Debug answers built or being sent at once, over every server the interface is mounted on. Some are the
 * whole registry or config (7 MiB of endpoint shards at 3,000 services, 60 ms to build): 64 asked at once by
 * one address, which its request bound allows, held `/ready` for 2.9 s and 500 MiB until sent.
 */
export const MAX_DEBUG_RESPONSES = 4;

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

/** Where the profiles are served (`--profile`): answers that stream while a profile runs. */
const PROFILE_PATH = "/debug/pprof/";

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
  readonly #responses: ResponseBound;
  readonly #refused: () => void;

  /**
   * `allowRemote` (`DEBUG_REMOTE_ACCESS`) lets callers other than loopback read the paths that reveal the
   * environment or the full config ({@link SENSITIVE_DEBUG_PATHS}); off by default. Past `maxResponses` (default
   * {@link MAX_DEBUG_RESPONSES}) answers in progress a request is answered 503 and `refused` is told.
   */
  constructor(
    options: {
      readonly allowRemote?: boolean;
      readonly maxResponses?: number;
      readonly refused?: () => void;
    } = {},
  ) {
    this.#allowRemote = options.allowRemote ?? false;
    this.#responses = new ResponseBound(options.maxResponses ?? MAX_DEBUG_RESPONSES);
    this.#refused = options.refused ?? (() => {});
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
      async (request, url) => {
        // A profile streams for as long as it was asked to run, one at a time (the profiler's own bound).
        if (url.pathname.startsWith(PROFILE_PATH)) return this.router.handle(request);
        const response = await this.#responses.run(async () => {
          // Answers are built one after another, each in a turn of its own, so other requests (`/ready`) get
          // theirs in between; each is sent in pieces, so it stays counted until its client has read it.
          await new Promise((resolve) => setTimeout(resolve, 0));
          const answer = await (SENSITIVE_DEBUG_PATHS.includes(url.pathname)
            ? guarded(request)
            : this.router.handle(request));
          if (answer.body === null) {
            return answer;
          }
          return new Response(streamInPieces(answer.body), answer);
        });
        if (response !== undefined) return response;
        this.#refused();
        return new Response(`${this.#responses.max} debug answers are being built or sent; retry\n`, {
          status: 503,
          headers: { "retry-after": "1" },
        });
      },
      FORWARDED_METHODS,
    );
    return outer;
  }
}
