import { jsonReplacer } from "./json_stream.ts";

/** An HTTP failure with its own status; handlers throw it and the router answers `{"error": message}`. */
export class HttpError extends Error {
  /** `status` is the HTTP status the router answers with. */
  constructor(readonly status: number, message: string) {
    super(message);
    this.name = "HttpError";
  }
}

/** A request handler: gets the request and its parsed URL. */
export type Handler = (request: Request, url: URL) => Response | Promise<Response>;

/** One registered path with its one-line help, for index pages. */
export interface Route {
  /** The exact path, or a prefix ending in `/`. */
  readonly path: string;
  /** Methods accepted; `HEAD` is accepted too wherever `GET` is. */
  readonly methods: readonly string[];
  /** One-line description for index pages. */
  readonly help: string;
}

/**
 * A tiny exact-path router (plus prefix routes ending in `/`). Unknown paths answer 404 JSON, wrong methods 405,
 * thrown HttpErrors their status, anything else 500 with the message; a handler error never stops the server.
 */
export class Router {
  readonly #routes = new Map<string, { methods: string[]; help: string; handler: Handler }>();

  /** Registers `handler` for `path` and `methods` (default GET). */
  add(path: string, help: string, handler: Handler, methods: string[] = ["GET"]): this {
    if (this.#routes.has(path)) throw new TypeError(`Route "${path}" is registered twice`);
    this.#routes.set(path, { methods, help, handler });
    return this;
  }

  /** Every route, sorted by path. */
  routes(): Route[] {
    return [...this.#routes.entries()].map(([path, r]) => ({ path, methods: r.methods, help: r.help }))
      .sort((a, b) => a.path.localeCompare(b.path));
  }

  /** Handles one request. */
  handle = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const route = this.#routes.get(url.pathname) ?? this.#prefixRoute(url.pathname);
    if (!route) {
      return jsonError(404, `No handler for path ${describePath(url.pathname)}; see /debug for the list`);
    }
    if (
      !route.methods.includes(request.method) && !(request.method === "HEAD" && route.methods.includes("GET"))
    ) {
      return jsonError(
        405,
        `Method ${request.method.length <= 20 ? request.method : "(unknown)"} is not allowed on ${
          describePath(url.pathname)
        }; use ${route.methods.join(", ")}`,
      );
    }
    try {
      return await route.handler(request, url);
    } catch (error) {
      if (error instanceof HttpError) return jsonError(error.status, error.message);
      return jsonError(
        500,
        `Internal error handling ${describePath(url.pathname)}: ${(error as Error)?.message ?? error}`,
      );
    }
  };

  #prefixRoute(pathname: string) {
    let best: { methods: string[]; help: string; handler: Handler } | undefined;
    let bestLength = -1;
    for (const [path, route] of this.#routes) {
      if (path.endsWith("/") && pathname.startsWith(path) && path.length > bestLength) {
        best = route;
        bestLength = path.length;
      }
    }
    return best;
  }
}

/** A JSON response with a pretty-printed body. */
export function jsonResponse(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body, jsonReplacer, 2) + "\n", {
    status,
    headers: { "content-type": "application/json" },
  });
}

/** A JSON error response `{"error": message}`. */
export function jsonError(status: number, message: string): Response {
  return jsonResponse({ error: message }, status);
}

/** A request path or method fit for an error reply: quoted when short and plain, else only its length. */
function describePath(text: string): string {
  return text.length <= 200 && /^[\w.:/@%~+-]*$/.test(text) ? `"${text}"` : `(${text.length} characters)`;
}
