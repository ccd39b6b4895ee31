import { loopbackOnly } from "@mesh/shared/http/serve";
import { ADMIN_BODY_LIMITS, describeInput, readBodyText } from "@mesh/shared/http/request_limits";
import { HttpError, jsonResponse, type Router } from "@mesh/shared/http/router";
import { type Level, LEVELS } from "@mesh/shared/log/levels";
import type { LogManager } from "@mesh/shared/log/log_manager";
import type { EnvSettings } from "@mesh/shared/env/env_settings";
import type { BuildInfo } from "@mesh/shared/version/build_info";
import { crossSiteReason } from "@mesh/shared/http/same_origin";
import { addCtrlzPages } from "./pages/ctrlz_page_routes.ts";
import { processFacts } from "./process_facts.ts";
import type { ReadNativeHeap } from "@mesh/shared/process/native_heap_figures";
import { memoryFigures } from "./memory_figures.ts";

/** What the introspection facility (ControlZ) shows and controls. */
export interface CtrlzDeps {
  readonly logs: LogManager;
  readonly env: EnvSettings;
  readonly info: BuildInfo;
  readonly args: readonly string[];
  readonly startedAt: Date;
  /** `DEBUG_REMOTE_ACCESS`: `/envj/` and `/argsj/` answer callers other than loopback too. */
  readonly allowRemote?: boolean;
  /** The Prometheus text of the program's metrics, for the metrics page. */
  readonly metrics?: () => Promise<string>;
  /** glibc's arenas, shown beside V8's figures; absent where glibc cannot be read. */
  readonly nativeHeap?: ReadNativeHeap;
}

/**
 * Registers ControlZ's JSON API, as Istio's ControlZ topics do: `/scopej/` lists log scopes, `/scopej/<scope>`
 * reads one and, with PUT, changes its output level, stack-trace level or caller logging while running;
 * `/procj/`, `/memj/`, `/envj/`, `/argsj/` and `/versionj/` describe the process. The pages a person uses
 * (`/`, `/scopez/`, `/memz/`, ...) show the same data ({@link addCtrlzPages}). A PUT a browser sends for a page
 * of another origin is refused, so no other site can change a level through the operator's browser.
 */
export function addCtrlzRoutes(router: Router, deps: CtrlzDeps): Router {
  const facts = () => processFacts("mesh-discovery", deps.info.version, deps.startedAt, Date.now());
  router.add("/scopej/", "Log scopes; GET /scopej/<scope>, PUT to change levels", async (request, url) => {
    const name = decodeURIComponent(url.pathname.slice("/scopej/".length));
    if (name === "") return jsonResponse(deps.logs.levels().map(scopeJson));
    const scope = deps.logs.levels().find((s) => s.scope === name);
    if (!scope) throw new HttpError(404, `Unknown log scope ${describeInput(name)}`);
    if (request.method === "GET") return jsonResponse(scopeJson(scope));
    const crossSite = crossSiteReason(request);
    if (crossSite !== undefined) throw new HttpError(403, crossSite);
    const body = await readJson(request);
    const output = body.output_level;
    const stack = body.stack_trace_level;
    for (const [field, value] of [["output_level", output], ["stack_trace_level", stack]] as const) {
      if (value !== undefined && !(LEVELS as readonly unknown[]).includes(value)) {
        throw new HttpError(
          400,
          `Invalid ${field} ${describeInput(value)}: expected one of ${LEVELS.join(", ")}`,
        );
      }
    }
    if (output !== undefined) deps.logs.setLevel(name, output as Level);
    if (stack !== undefined) deps.logs.setStacktraceLevel(name, stack as Level);
    if (body.log_callers !== undefined) {
      if (typeof body.log_callers !== "boolean") {
        throw new HttpError(400, "Invalid log_callers: expected true or false");
      }
      deps.logs.setCallers(name, body.log_callers);
    }
    return jsonResponse(scopeJson(deps.logs.levels().find((s) => s.scope === name)!));
  }, ["GET", "PUT"]);
  router.add("/procj/", "Process information", () => {
    const now = facts();
    return jsonResponse({
      pid: now.pid,
      ppid: now.ppid,
      hostname: now.hostname,
      started: now.started,
      uptime_seconds: now.uptimeSeconds,
      cwd: now.cwd,
    });
  });
  // glibc's figures walk every arena's free lists under its locks (milliseconds on a large heap): a caller that
  // samples often and wants V8's figures alone asks `?native=false`.
  router.add("/memj/", "Memory usage (?native=false: without glibc's figures)", (_req, url) => {
    const native = url.searchParams.get("native");
    if (native !== null && native !== "true" && native !== "false") {
      throw new HttpError(400, `Invalid native ${describeInput(native)}: expected true or false`);
    }
    return jsonResponse(memoryFigures(native === "false" ? undefined : deps.nativeHeap));
  });
  // The environment and arguments may carry secrets: loopback callers only unless the operator opts in.
  const allowRemote = deps.allowRemote ?? false;
  router.add(
    "/envj/",
    "Environment variables the program reads, resolved (loopback only unless DEBUG_REMOTE_ACCESS=true)",
    loopbackOnly(() => jsonResponse(deps.env.resolved()), allowRemote),
  );
  router.add(
    "/argsj/",
    "Command-line arguments (loopback only unless DEBUG_REMOTE_ACCESS=true)",
    loopbackOnly(() => jsonResponse(deps.args), allowRemote),
  );
  router.add("/versionj/", "Build information", () => jsonResponse(deps.info));
  return addCtrlzPages(router, {
    ...deps,
    facts,
    allowRemote,
    scopes: () => deps.logs.levels().map(scopeJson),
  });
}

/** A log scope as `/scopej/` and the scopes page show it. */
export function scopeJson(s: ReturnType<LogManager["levels"]>[number]) {
  return {
    name: s.scope,
    output_level: s.outputLevel,
    stack_trace_level: s.stackTraceLevel,
    log_callers: s.logCallers,
  };
}

async function readJson(request: Request): Promise<Record<string, unknown>> {
  const text = await readBodyText(request, ADMIN_BODY_LIMITS);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    // The parser's message quotes the input; the reply must not.
    body = undefined;
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new HttpError(400, 'Invalid body: expected a JSON object such as {"output_level":"debug"}');
  }
  return body as Record<string, unknown>;
}
