/**
 * Connections that open and say nothing (TCP only: no HTTP/2 preface, no request), to the xDS and the debug
 * ports, more of them than the server may hold files; held, then dropped. Before it exits the attacker checks
 * that both ports accept and answer again.
 *
 * @module
 */

/** Sizes of the attack. */
export interface HalfOpenSizes {
  /** Connections to each port. */
  readonly connections: number;
  /** Seconds to hold them. */
  readonly holdS: number;
}

const CONNECT_TIMEOUT_MS = 3_000;
/** HTTP/2 client preface and an empty SETTINGS frame. */
export const H2_PREFACE = new TextEncoder().encode(
  "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00",
);

function split(addr: string): { hostname: string; port: number } {
  const at = addr.lastIndexOf(":");
  return { hostname: addr.slice(0, at), port: Number(addr.slice(at + 1)) };
}

async function connectWithin(addr: string, ms: number): Promise<Deno.Conn | undefined> {
  const attempt = Deno.connect(split(addr)).catch(() => undefined);
  const conn = await Promise.race([
    attempt,
    new Promise<undefined>((r) => setTimeout(() => r(undefined), ms)),
  ]);
  // One that connects after the timeout is closed when it does.
  if (conn === undefined) attempt.then((late) => late?.close());
  return conn;
}

/** True when a new connection to `addr` gets `answer` bytes back to `hello` within a few seconds. */
async function answers(addr: string, hello: Uint8Array): Promise<boolean> {
  const conn = await connectWithin(addr, CONNECT_TIMEOUT_MS);
  if (conn === undefined) return false;
  try {
    await conn.write(hello);
    const read = conn.read(new Uint8Array(1024)).catch(() => null);
    const n = await Promise.race([read, new Promise<null>((r) => setTimeout(() => r(null), 5_000))]);
    return n !== null && n > 0;
  } finally {
    conn.close();
  }
}

/** Runs the attack; resolves with how many connections opened and whether both ports answer afterwards. */
export async function halfOpen(
  grpcAddr: string,
  httpAddr: string,
  sizes: HalfOpenSizes,
): Promise<Record<string, unknown>> {
  const held: Deno.Conn[] = [];
  const opened: Record<string, number> = {};
  for (const addr of [grpcAddr, httpAddr]) {
    opened[addr] = 0;
    for (let c = 0; c < sizes.connections; c += 100) {
      const batch = await Promise.all(
        Array.from(
          { length: Math.min(100, sizes.connections - c) },
          () => connectWithin(addr, CONNECT_TIMEOUT_MS),
        ),
      );
      for (const conn of batch) {
        if (conn === undefined) continue;
        held.push(conn);
        opened[addr]++;
      }
    }
  }
  await new Promise((resolve) => setTimeout(resolve, sizes.holdS * 1000));
  for (const conn of held) conn.close();
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const host = split(httpAddr).hostname;
  return {
    opened,
    grpcAnswersAfter: await answers(grpcAddr, H2_PREFACE),
    httpAnswersAfter: await answers(
      httpAddr,
      new TextEncoder().encode(`GET /ready HTTP/1.1\r\nHost: ${host}\r\n\r\n`),
    ),
  };
}
