import assert from "node:assert/strict";
import { NodeSocketConn } from "./node_socket_conn.ts";

/** A NodeSocketConn to a loopback listener, and the listener's end of it. */
async function connectedPair() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const accepted = listener.accept();
  const conn = await NodeSocketConn.connect({
    hostname: "127.0.0.1",
    port: (listener.addr as Deno.NetAddr).port,
  });
  return { listener, conn, peer: await accepted };
}

Deno.test("NodeSocketConn closes a socket at once though a write to a peer that reads nothing is in progress", async () => {
  // A Deno.Conn keeps such a socket open until the write completes: the peer sees its end only after reading
  // everything, the write in progress included.
  const { listener, conn, peer } = await connectedPair();
  try {
    const big = new Uint8Array(64 * 1024 * 1024);
    // Nothing is read, and no socket buffers 64 MiB: the write cannot finish.
    const writing = conn.write(big).then(() => "written", () => "failed");
    conn.close();
    assert.equal(await writing, "failed");
    // The peer reads what reached it and then the end, far short of the 64 MiB written.
    const chunk = new Uint8Array(1024 * 1024);
    let received = 0;
    while (true) {
      const n = await peer.read(chunk).catch(() => null);
      if (n === null) break;
      received += n;
    }
    assert.ok(received < big.length, `the peer got ${received} of ${big.length} bytes, then the end`);
  } finally {
    peer.close();
    listener.close();
  }
});

Deno.test("NodeSocketConn reads what its peer sends, then null at its end", async () => {
  const { listener, conn, peer } = await connectedPair();
  try {
    const sent = new Uint8Array(300 * 1024).map((_, i) => i % 251);
    await peer.write(sent);
    peer.close();
    const got: number[] = [];
    const chunk = new Uint8Array(7_000);
    for (let n = await conn.read(chunk); n !== null; n = await conn.read(chunk)) {
      got.push(...chunk.subarray(0, n));
    }
    assert.deepEqual(Uint8Array.from(got), sent);
  } finally {
    conn.close();
    listener.close();
  }
});

Deno.test("NodeSocketConn's closeWrite settles on a socket already closed", async () => {
  // node:net runs end()'s callback only for a socket still open: waiting on it after a close waited for good.
  const { listener, conn, peer } = await connectedPair();
  try {
    conn.close();
    await conn.closeWrite();
  } finally {
    peer.close();
    listener.close();
  }
});
