/**
 * `--run-validation`: proves the installed rules capture traffic, the way Istio's validation does. Listeners
 * stand on the redirect targets (proxy port and inbound capture port on loopback) and on the probe port; a
 * client dials the probe target (see {@linkcode chooseProbeTarget}) and sends a random token. The token
 * arriving on a redirect-target listener, whose port differs from the one dialed, shows the connection was
 * redirected; arriving on the probe-port listener shows it was not. Nothing else counts.
 * @module
 */

import { setTimeout as sleep } from "node:timers/promises";
import type { IptablesConfig } from "./config.ts";
import type { ProbeTarget } from "./probe_target.ts";
import type { CaptureLogger } from "./capture_logger.ts";

/** The probe's connection was not captured, or not in time. */
export class CaptureValidationError extends Error {
  /** `options.cause` holds the underlying error, when there is one. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "CaptureValidationError";
  }
}

/** How a successful probe went. */
export interface ProbeResult {
  /** Where the probe connected. */
  readonly target: ProbeTarget;
  /** The redirect-target port the probe arrived at. */
  readonly arrivedAt: number;
  /** Connection attempts made before one was captured; at least 1. */
  readonly attempts: number;
}

type Outcome = { kind: "captured"; port: number } | { kind: "bypassed" } | { kind: "timeout" };

const RETRY_MS = 100;

/** Runs the probe; resolves when captured, rejects with {@linkcode CaptureValidationError} within the timeout. */
export async function runCaptureProbe(
  config: IptablesConfig,
  target: ProbeTarget,
  logger: CaptureLogger,
): Promise<ProbeResult> {
  const token = crypto.randomUUID();
  const loopback = target.family === 4 ? "127.0.0.1" : "::1";
  const wildcard = target.family === 4 ? "0.0.0.0" : "::";
  const capturePorts = [...new Set([config.proxyPort, config.inboundCapturePort])];
  const listeners: Deno.Listener[] = [];
  const conns = new Set<Deno.Conn>();
  const stop = new AbortController();
  let settle: (outcome: Outcome) => void = () => {};
  const outcome = new Promise<Outcome>((resolve) => settle = resolve);
  const timer = setTimeout(() => settle({ kind: "timeout" }), config.probeTimeoutMs);
  let attempts = 0;
  const tasks: Promise<unknown>[] = [];
  const reads: Promise<unknown>[] = [];
  try {
    for (const port of capturePorts) listeners.push(listen(loopback, port, "redirect target"));
    const bypass = listen(wildcard, target.port, "probe port");
    listeners.push(bypass);
    for (const listener of listeners) {
      const onToken = listener === bypass
        ? () => settle({ kind: "bypassed" })
        : () => settle({ kind: "captured", port: (listener.addr as Deno.NetAddr).port });
      tasks.push(acceptLoop(listener, token, conns, reads, onToken));
    }
    logger.info("Validating traffic capture", {
      dial: `${hostPort(target.hostname, target.port)}`,
      path: target.path,
      listeners: capturePorts.map((port) => hostPort(loopback, port)),
      timeoutMs: config.probeTimeoutMs,
    });
    tasks.push((async () => {
      while (!stop.signal.aborted) {
        attempts++;
        await dialOnce(target, token, stop.signal, logger);
        // Stopping cuts the wait short; that is the only way it rejects.
        await sleep(RETRY_MS, undefined, { signal: stop.signal }).catch((error) => {
          if (!stop.signal.aborted) throw error;
        });
      }
    })());
    const result = await outcome;
    const dialed = hostPort(target.hostname, target.port);
    if (result.kind === "captured") {
      logger.info("Traffic capture validated", { dial: dialed, arrivedAt: result.port, attempts });
      return Object.freeze({ target, arrivedAt: result.port, attempts });
    }
    if (result.kind === "bypassed") {
      throw new CaptureValidationError(
        `Iptables validation failed: the probe connection to ${dialed} reached port ${target.port} directly ` +
          `instead of being redirected to port ${target.expectedPort} (${target.path}); the capture rules are not in effect`,
      );
    }
    throw new CaptureValidationError(
      `Iptables validation failed: no probe connection to ${dialed} reached the redirect targets ` +
        `${
          capturePorts.join(", ")
        } within ${config.probeTimeoutMs} ms (${target.path}, ${attempts} attempts); ` +
        `traffic is not captured`,
    );
  } finally {
    clearTimeout(timer);
    stop.abort();
    for (const listener of listeners) listener.close();
    for (const conn of conns) closeQuietly(conn);
    await Promise.allSettled(tasks);
    await Promise.allSettled(reads);
  }
}

function listen(hostname: string, port: number, role: string): Deno.Listener {
  try {
    return Deno.listen({ hostname, port, transport: "tcp" });
  } catch (cause) {
    const why = cause instanceof Deno.errors.AddrInUse
      ? "it is in use; validation must run before the proxy starts"
      : String(cause);
    throw new CaptureValidationError(
      `Iptables validation cannot listen on ${hostPort(hostname, port)} (${role}): ${why}`,
      {
        cause,
      },
    );
  }
}

async function acceptLoop(
  listener: Deno.Listener,
  token: string,
  conns: Set<Deno.Conn>,
  reads: Promise<unknown>[],
  onToken: () => void,
) {
  try {
    for await (const conn of listener) {
      conns.add(conn);
      reads.push(
        readToken(conn, token.length).then((text) => {
          if (text === token) onToken();
        }).finally(() => {
          conns.delete(conn);
          closeQuietly(conn);
        }),
      );
    }
  } catch {
    // The listener was closed: the probe is over.
  }
}

async function readToken(conn: Deno.Conn, length: number): Promise<string> {
  const buffer = new Uint8Array(length);
  let filled = 0;
  try {
    while (filled < length) {
      const n = await conn.read(buffer.subarray(filled));
      if (n === null) break;
      filled += n;
    }
  } catch {
    // A peer that resets or a closed connection just is not our probe.
  }
  return new TextDecoder().decode(buffer.subarray(0, filled));
}

async function dialOnce(target: ProbeTarget, token: string, signal: AbortSignal, logger: CaptureLogger) {
  let conn: Deno.TcpConn | undefined;
  try {
    conn = await Deno.connect({ hostname: target.hostname, port: target.port, signal });
    await conn.write(new TextEncoder().encode(token));
  } catch (error) {
    if (!signal.aborted) logger.debug("Probe connection failed", { error: String(error) });
  } finally {
    if (conn) closeQuietly(conn);
  }
}

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // Already closed.
  }
}

function hostPort(hostname: string, port: number): string {
  return hostname.includes(":") ? `[${hostname}]:${port}` : `${hostname}:${port}`;
}
