import { loopbackOnly } from "../../shared/http/serve.ts";
import { ADMIN_BODY_LIMITS, describeInput, readBodyText } from "../../shared/http/request_limits.ts";
import { HttpError, jsonResponse, type Router } from "../../shared/http/router.ts";
import { type Level, LEVELS } from "../../shared/log/levels.ts";
import type { LogManager } from "../../shared/log/log_manager.ts";
import type { EnvSettings } from "../../shared/env/env_settings.ts";
import type { BuildInfo } from "../../shared/version/build_info.ts";

/** What the introspection facility (ControlZ) shows and controls. */
export interface CtrlzDeps {
  readonly logs: LogManager;
  readonly env: EnvSettings;
  readonly info: BuildInfo;
  readonly args: readonly string[];
  readonly startedAt: Date;
  /** `DEBUG_REMOTE_ACCESS`: `/envj/` and `/argsj/` answer callers other than loopback too. */
  readonly allowRemote?: boolean;
}

/**
 * Registers ControlZ's JSON API, as Istio's ControlZ topics do: `/scopej/` lists log scopes, `/scopej/<scope>`
 * reads one and, with PUT, changes its output level, stack-trace level or caller logging while running;
 * `/procj/`, `/memj/`, `/envj/`, `/argsj/` and `/versionj/` describe the process. `/` is a small HTML index.
 */
export function addCtrlzRoutes(router: Router, deps: CtrlzDeps): Router {
  router.add(
    "/",
    "ControlZ index",
    () => new Response(indexPage(router), { headers: { "content-type": "text/html" } }),
  );
  router.add("/scopej/", "Log scopes; GET /scopej/<scope>, PUT to change levels", async (request, url) => {
    const name = decodeURIComponent(url.pathname.slice("/scopej/".length));
    if (name === "") return jsonResponse(deps.logs.levels().map(scopeJson));
    const scope = deps.logs.levels().find((s) => s.scope === name);
    if (!scope) throw new HttpError(404, `Unknown log scope ${describeInput(name)}`);
    if (request.method === "GET") return jsonResponse(scopeJson(scope));
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
  router.add("/procj/", "Process information", () =>
    jsonResponse({
      pid: Deno.pid,
      ppid: Deno.ppid,
      hostname: safe(() => Deno.hostname()),
      started: deps.startedAt.toISOString(),
      uptime_seconds: Math.round((Date.now() - deps.startedAt.getTime()) / 1000),
      cwd: safe(() => Deno.cwd()),
    }));
  router.add("/memj/", "Memory usage", () => jsonResponse(Deno.memoryUsage()));
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
  return router;
}

function scopeJson(s: ReturnType<LogManager["levels"]>[number]) {
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

function safe(fn: () => string): string | undefined {
  try {
    return fn();
  } catch {
    return undefined;
  }
}

function indexPage(router: Router): string {
  const rows = router.routes().map((r) =>
    `<li><a href="${r.path}">${r.path}</a> — ${escapeHtml(r.help)}</li>`
  );
  return `<!doctype html><title>ControlZ</title><h1>ControlZ</h1><ul>${rows.join("")}</ul>\n`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);
}
