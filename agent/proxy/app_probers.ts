/**
 * Runs one application probe against the application in the pod, as the kubelet would have run it: an HTTP
 * GET whose status code is the answer, or a TCP connection whose success is.
 *
 * @module
 */
import http from "node:http";
import https from "node:https";
import type { AppProbe, HttpGetProbe, TcpSocketProbe } from "./app_probe_config.ts";

/** What a probe found: the status the status port answers with, and why it failed when it did. */
export interface ProbeOutcome {
  /** HTTP probes: the application's status code; TCP probes: 200 or 500; 500 when the probe itself failed. */
  readonly status: number;
  /** Why the probe failed (no answer, refused, timed out); absent when the application answered. */
  readonly error?: string;
}

/** Runs `probe` once; never throws. */
export function runAppProbe(probe: AppProbe): Promise<ProbeOutcome> {
  return probe.kind === "httpGet" ? httpGet(probe) : tcpSocket(probe);
}

async function tcpSocket(probe: TcpSocketProbe): Promise<ProbeOutcome> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), probe.timeoutMs);
  try {
    const conn = await Deno.connect({ hostname: probe.host, port: probe.port, signal: controller.signal });
    conn.close();
    return { status: 200 };
  } catch (error) {
    const reason = controller.signal.aborted
      ? `no connection within ${probe.timeoutMs} ms`
      : (error as Error).message;
    return { status: 500, error: `TCP probe of port ${probe.port} failed: ${reason}` };
  } finally {
    clearTimeout(timer);
  }
}

// node:http rather than fetch: fetch can neither skip certificate verification (HTTPS probes must, as the
// kubelet does) nor set the Host header, and it follows redirects, which the kubelet reports as they are.
function httpGet(probe: HttpGetProbe): Promise<ProbeOutcome> {
  const { promise, resolve } = Promise.withResolvers<ProbeOutcome>();
  const host = probe.host.includes(":") ? `[${probe.host}]` : probe.host;
  const url = `${probe.scheme.toLowerCase()}://${host}:${probe.port}${probe.path}`;
  const fail = (reason: string) => resolve({ status: 500, error: `HTTP probe of ${url} failed: ${reason}` });
  const headers: Record<string, string> = { "user-agent": "mesh-agent-probe", accept: "*/*" };
  // Configured headers replace the defaults; a name given twice keeps its last value.
  for (const [name, value] of probe.headers) headers[name.toLowerCase()] = value;
  const request = (probe.scheme === "HTTPS" ? https : http).request({
    host: probe.host,
    port: probe.port,
    path: probe.path,
    method: "GET",
    headers,
    // A fresh connection per probe, closed after it, as the kubelet does: a probe must see whether the
    // application still accepts connections.
    agent: false,
    ...(probe.scheme === "HTTPS" ? { rejectUnauthorized: false } : {}),
  }, (response) => {
    clearTimeout(timer);
    const status = response.statusCode ?? 0;
    // Only the status matters; the body is not read, and the connection is closed.
    response.destroy();
    if (status < 200 || status > 599) {
      fail(`the application answered with status ${status}`);
    } else {
      resolve({ status });
    }
  });
  const timer = setTimeout(() => {
    fail(`no answer within ${probe.timeoutMs} ms`);
    request.destroy();
  }, probe.timeoutMs);
  request.on("error", (error) => {
    clearTimeout(timer);
    fail(error.message);
  });
  request.end();
  return promise;
}
