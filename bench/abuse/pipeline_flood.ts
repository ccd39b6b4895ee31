/**
 * Clients that pipeline requests they never read the answers to: connections to the debug port (or, over TLS,
 * the webhook port) each writing `GET /ready` (`/httpsReady`) requests back to back without reading a byte,
 * then leaving. Counts the requests written and
 * how each connection ended, to lay beside the probe's latencies and the server's memory after.
 *
 * @module
 */

/** Sizes of the attack. */
export interface PipelineFloodSizes {
  readonly connections: number;
  /** Seconds to keep writing before leaving. */
  readonly holdS: number;
  /** 1: TLS to the webhook port; 0: plain HTTP to the debug port. */
  readonly tls: number;
}

const encoder = new TextEncoder();
/** Requests per write. */
const BATCH = 1000;

/** Runs the attack; resolves with the requests written and how the writes ended. */
export async function pipelineFlood(
  addr: string,
  sizes: PipelineFloodSizes,
): Promise<Record<string, unknown>> {
  const [hostname, port] = [
    addr.slice(0, addr.lastIndexOf(":")),
    Number(addr.slice(addr.lastIndexOf(":") + 1)),
  ];
  const path = sizes.tls ? "/httpsReady" : "/ready";
  const batch = encoder.encode(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`.repeat(BATCH));
  const until = Date.now() + sizes.holdS * 1000;
  let written = 0;
  const ended: Record<string, number> = {};
  const conns: Deno.Conn[] = [];
  const writing: Promise<void>[] = [];
  for (let i = 0; i < sizes.connections; i++) {
    const conn = sizes.tls
      ? await Deno.connectTls({ hostname, port })
      : await Deno.connect({ hostname, port });
    conns.push(conn);
    writing.push((async () => {
      try {
        // A write blocked on a full window ends when the connection is closed below.
        while (Date.now() < until) {
          await conn.write(batch);
          written += BATCH;
        }
        ended.held = (ended.held ?? 0) + 1;
      } catch (error) {
        const name = (error as Error).name;
        ended[name] = (ended[name] ?? 0) + 1;
      }
    })());
  }
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, until - Date.now())));
  for (const conn of conns) {
    try {
      conn.close();
    } catch {
      // already closed
    }
  }
  await Promise.race([Promise.all(writing), new Promise((resolve) => setTimeout(resolve, 2_000))]);
  return { connections: conns.length, requestsWritten: written, ended };
}
