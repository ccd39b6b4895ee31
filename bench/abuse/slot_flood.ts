/**
 * Connections that hold the server's connection slots: plain HTTP keep-alive connections to the debug port
 * that get one answer and then trickle a second request's headers a byte at a time, or TLS connections to the
 * webhook port that ask something every so often (each well inside any idle timeout). Counts how many the
 * server closed while they were held, and when (seconds from the attack's start), to lay beside the probe's
failures.
 *
 * @module
 */

/** Sizes of the attack. */
export interface SlotFloodSizes {
  readonly connections: number;
  readonly tls: boolean;
  /** Plain: ms between trickled header bytes; TLS: ms between requests. */
  readonly everyMs: number;
  /** Seconds to hold the connections. */
  readonly holdS: number;
}

const encoder = new TextEncoder();

/** Reads one chunk, or null when the peer closed or reset. */
async function readSome(conn: Deno.Conn): Promise<number | null> {
  try {
    return await conn.read(new Uint8Array(16 * 1024));
  } catch {
    return null;
  }
}

/** Runs the attack; resolves with how many connections opened, were answered, and were closed by the server. */
export async function slotFlood(addr: string, sizes: SlotFloodSizes): Promise<Record<string, unknown>> {
  const [hostname, port] = [
    addr.slice(0, addr.lastIndexOf(":")),
    Number(addr.slice(addr.lastIndexOf(":") + 1)),
  ];
  const path = sizes.tls ? "/httpsReady" : "/ready";
  const request = encoder.encode(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`);
  const until = Date.now() + sizes.holdS * 1000;
  let opened = 0;
  let answered = 0;
  let closedByServer = 0;
  let failedToOpen = 0;
  const startedAt = Date.now();
  /** Connections closed by the server, by whole seconds from `startedAt`. */
  const closedAtS: Record<number, number> = {};
  const openErrors: string[] = [];
  const serverClosed = () => {
    closedByServer++;
    const second = Math.floor((Date.now() - startedAt) / 1000);
    closedAtS[second] = (closedAtS[second] ?? 0) + 1;
  };
  const held: Deno.Conn[] = [];
  const hold = async (conn: Deno.Conn) => {
    await conn.write(request);
    if (await readSome(conn) === null) return void serverClosed();
    answered++;
    if (sizes.tls) {
      while (Date.now() + sizes.everyMs < until) {
        await new Promise((resolve) => setTimeout(resolve, sizes.everyMs));
        await conn.write(request);
        if (await readSome(conn) === null) return void serverClosed();
      }
      return;
    }
    const trickle = encoder.encode(
      `GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nX-Slow: ${"a".repeat(4096)}`,
    );
    // The server may close the connection (its header timeout); a pending read notices.
    let closed = false;
    const watch = readSome(conn).then(() => closed = true);
    for (let i = 0; i < trickle.length && Date.now() < until && !closed; i++) {
      try {
        await conn.write(trickle.subarray(i, i + 1));
      } catch {
        closed = true;
      }
      await Promise.race([watch, new Promise((resolve) => setTimeout(resolve, sizes.everyMs))]);
    }
    if (closed) serverClosed();
  };
  const tasks: Promise<void>[] = [];
  for (let c = 0; c < sizes.connections; c++) {
    try {
      const conn = sizes.tls
        ? await Deno.connectTls({ hostname, port })
        : await Deno.connect({ hostname, port });
      if (sizes.tls) await (conn as Deno.TlsConn).handshake();
      opened++;
      held.push(conn);
      tasks.push(hold(conn).catch(serverClosed));
    } catch (error) {
      failedToOpen++;
      if (openErrors.length < 5) openErrors.push(error instanceof Error ? error.message : String(error));
    }
  }
  const openedAllS = (Date.now() - startedAt) / 1000;
  await Promise.race([
    Promise.all(tasks),
    new Promise((resolve) => setTimeout(resolve, Math.max(0, until - Date.now()))),
  ]);
  for (const conn of held) {
    try {
      conn.close();
    } catch {
      // Closed already.
    }
  }
  return {
    opened,
    failedToOpen,
    answered,
    closedByServer,
    startedAt,
    openedAllS,
    closedAtS,
    ...(openErrors.length > 0 && { openErrors }),
  };
}
