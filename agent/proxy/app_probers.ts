/**
 * Application probes rewritten to the agent (`MESH_ORCH_APP_PROBERS`): the orchestrator probes
 * `/app-health/<container>/{livez,readyz,startupz}` on the status port, and the agent runs the container's
 * original probe against the application on localhost, where mesh mTLS does not get in the way. The variable
 * holds JSON mapping each path to a probe, `{"httpGet": {"path", "port", "scheme", "host", "httpHeaders"},
 * "timeoutSeconds"}` or `{"tcpSocket": {"port"}, "timeoutSeconds"}`, as the injector writes it.
 *
 * @module
 */
import http from "node:http";
import https from "node:https";
import net from "node:net";

/** An HTTP GET probe. */
export interface HttpProbe {
  readonly kind: "http";
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
}

/** A TCP connect probe. */
export interface TcpProbe {
  readonly kind: "tcp";
  readonly host: string;
  readonly port: number;
  readonly timeoutMs: number;
}

/** One rewritten probe. */
export type AppProbe = HttpProbe | TcpProbe;

/** What a probe found: the status the status port answers with, and why. */
export interface ProbeResult {
  readonly status: number;
  readonly detail: string;
}

const PATH = /^\/app-health\/[^/]+\/(livez|readyz|startupz)$/;
const DEFAULT_TIMEOUT_S = 1;

function fail(name: string, where: string, expected: string): never {
  throw new RangeError(`Invalid ${name}: ${where}: expected ${expected}`);
}

function portOf(name: string, where: string, value: unknown): number {
  const port = typeof value === "string" && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof port !== "number" || !Number.isInteger(port) || port < 1 || port > 65535) {
    fail(name, where, "a port number from 1 to 65535 (named ports are resolved by the injector)");
  }
  return port;
}

/**
 * Parses the probes, checked once at startup.
 *
 * @throws {RangeError} naming the variable, the path or field, and what is expected
 */
export function parseAppProbers(text: string, name = "MESH_ORCH_APP_PROBERS"): ReadonlyMap<string, AppProbe> {
  if (text.trim() === "") return new Map();
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw new RangeError(`Invalid ${name}: not JSON: ${(error as Error).message}`);
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
    fail(name, "the value", "an object mapping /app-health/<container>/<livez|readyz|startupz> to probes");
  }
  const out = new Map<string, AppProbe>();
  for (const [path, raw] of Object.entries(doc as Record<string, unknown>)) {
    if (!PATH.test(path)) fail(name, `"${path}"`, "a path /app-health/<container>/<livez|readyz|startupz>");
    const probe = raw as {
      httpGet?: { path?: unknown; port?: unknown; scheme?: unknown; host?: unknown; httpHeaders?: unknown };
      tcpSocket?: { port?: unknown };
      timeoutSeconds?: unknown;
    };
    const timeout = probe?.timeoutSeconds ?? DEFAULT_TIMEOUT_S;
    if (typeof timeout !== "number" || !(timeout > 0) || timeout > 3600) {
      fail(name, `"${path}".timeoutSeconds`, "seconds from 1 to 3600");
    }
    const timeoutMs = timeout * 1000;
    if (probe?.httpGet !== undefined) {
      const get = probe.httpGet;
      const port = portOf(name, `"${path}".httpGet.port`, get.port);
      const scheme = String(get.scheme ?? "HTTP").toUpperCase();
      if (scheme !== "HTTP" && scheme !== "HTTPS") fail(name, `"${path}".httpGet.scheme`, "HTTP or HTTPS");
      const target = typeof get.path === "string" && get.path !== "" ? get.path : "/";
      const host = typeof get.host === "string" && get.host !== "" ? get.host : "127.0.0.1";
      const headers: Record<string, string> = {};
      for (const [i, header] of (Array.isArray(get.httpHeaders) ? get.httpHeaders : []).entries()) {
        const h = header as { name?: unknown; value?: unknown };
        if (typeof h?.name !== "string" || h.name === "") {
          fail(name, `"${path}".httpGet.httpHeaders[${i}].name`, "a header name");
        }
        headers[h.name] = String(h.value ?? "");
      }
      const url = new URL(`${scheme.toLowerCase()}://${host.includes(":") ? `[${host}]` : host}:${port}`);
      url.pathname = target.startsWith("/") ? target.split("?")[0] : `/${target}`;
      if (target.includes("?")) url.search = target.slice(target.indexOf("?"));
      out.set(
        path,
        Object.freeze({ kind: "http", url: url.href, headers: Object.freeze(headers), timeoutMs }),
      );
    } else if (probe?.tcpSocket !== undefined) {
      const port = portOf(name, `"${path}".tcpSocket.port`, probe.tcpSocket.port);
      out.set(path, Object.freeze({ kind: "tcp", host: "127.0.0.1", port, timeoutMs }));
    } else {
      fail(name, `"${path}"`, "a probe with httpGet or tcpSocket");
    }
  }
  return out;
}

/** Whether a path is one of the rewritten probe paths (known or not). */
export function isAppHealthPath(path: string): boolean {
  return path.startsWith("/app-health/");
}

/**
 * Runs `probe`. HTTP: the application's status is passed on (a kubelet counts 200–399 as success); HTTPS does
 * not verify the certificate, as a kubelet does not. TCP: 200 when the port accepts a connection, 500 else.
 * A probe that takes longer than its timeout fails with 500.
 */
export async function runProbe(probe: AppProbe): Promise<ProbeResult> {
  if (probe.kind === "tcp") {
    return await new Promise<ProbeResult>((resolve) => {
      const socket = net.connect({ host: probe.host, port: probe.port });
      const done = (result: ProbeResult) => {
        clearTimeout(timer);
        socket.destroy();
        resolve(result);
      };
      const timer = setTimeout(
        () => done({ status: 500, detail: `no connection within ${probe.timeoutMs} ms` }),
        probe.timeoutMs,
      );
      socket.once("connect", () => done({ status: 200, detail: "connected" }));
      socket.once("error", (error) => done({ status: 500, detail: error.message }));
    });
  }
  const url = new URL(probe.url);
  const get = url.protocol === "https:" ? https.get : http.get;
  return await new Promise<ProbeResult>((resolve) => {
    const request = get(url, {
      headers: probe.headers,
      timeout: probe.timeoutMs,
      // A kubelet does not verify the application's certificate either.
      ...(url.protocol === "https:" ? { rejectUnauthorized: false } : {}),
    }, (response) => {
      response.resume();
      const status = response.statusCode ?? 500;
      resolve({ status, detail: `the application answered ${status}` });
    });
    request.on("timeout", () => {
      request.destroy();
      resolve({ status: 500, detail: `no answer within ${probe.timeoutMs} ms` });
    });
    request.on("error", (error) => resolve({ status: 500, detail: error.message }));
  });
}
