/**
 * Connections opened and closed as fast as one client can: TLS handshakes to the secure xDS port or the
 * webhook port (the server signs once for each), or plain TCP connections to the xDS port; each closed at once,
 * or after sending the HTTP/2 client preface, by `workers` loops at a time. It measures what one caller's
 * connections cost the server: its event loop (the harness's `/ready` probe and push watcher run beside it)
 * and what each closed connection leaves behind.
 *
 * @module
 */
import { H2_PREFACE } from "./half_open.ts";

/** Sizes of the attack. */
export interface HandshakeFloodSizes {
  /** Connections being opened at once. */
  readonly workers: number;
  /** Seconds to keep opening them. */
  readonly holdS: number;
  /** 0: the secure xDS port (15012, TLS); 1: the webhook port (15017, TLS); 2: the plain xDS port (15010). */
  readonly port: number;
  /** 1: send the HTTP/2 client preface and SETTINGS before closing. */
  readonly preface: number;
}

const PORT_NAMES = ["secure-xds", "webhook", "plain-xds"];

/** Runs the attack; resolves with how many connections finished and failed, and the rate. */
export async function handshakeFlood(
  grpcAddr: string,
  secureGRPCAddr: string,
  httpsAddr: string,
  sizes: HandshakeFloodSizes,
): Promise<Record<string, unknown>> {
  const addr = [secureGRPCAddr, httpsAddr, grpcAddr][sizes.port];
  if (addr === undefined) throw new RangeError(`port=${sizes.port}: expected 0, 1 or 2`);
  const at = addr.lastIndexOf(":");
  const target = { hostname: addr.slice(0, at), port: Number(addr.slice(at + 1)) };
  const alpnProtocols = sizes.port === 1 ? ["http/1.1"] : ["h2"];
  const startedAt = Date.now();
  const until = startedAt + sizes.holdS * 1000;
  let finished = 0;
  let failed = 0;
  const errors = new Map<string, number>();
  const open = async (): Promise<Deno.Conn> => {
    if (sizes.port === 2) return await Deno.connect(target);
    const conn = await Deno.connectTls({ ...target, alpnProtocols });
    await conn.handshake();
    return conn;
  };
  const worker = async () => {
    while (Date.now() < until) {
      let conn: Deno.Conn | undefined;
      try {
        conn = await open();
        if (sizes.preface) await conn.write(H2_PREFACE);
        finished++;
      } catch (error) {
        failed++;
        const message = error instanceof Error ? error.message.slice(0, 120) : String(error);
        errors.set(message, (errors.get(message) ?? 0) + 1);
        // A refused connection returns at once; do not spin.
        await new Promise((resolve) => setTimeout(resolve, 10));
      } finally {
        try {
          conn?.close();
        } catch {
          // Closed already.
        }
      }
    }
  };
  await Promise.all(Array.from({ length: sizes.workers }, worker));
  const seconds = (Date.now() - startedAt) / 1000;
  return {
    port: PORT_NAMES[sizes.port],
    finished,
    failed,
    perSecond: Math.round(finished / seconds),
    ...(errors.size > 0 && { errors: Object.fromEntries([...errors].slice(0, 5)) }),
  };
}
