import assert from "node:assert/strict";
import { PendingWrites } from "./guard_relay.ts";
import { TlsTerminator, type TlsTransport } from "./tls_termination.ts";
import { selfSignedLoopback } from "../testing/openssl.ts";
import { waitFor } from "../testing/wait_for.ts";

const encode = (text: string) => new TextEncoder().encode(text);

/** `conn`, counting the bytes read from it. */
function counted(conn: Deno.Conn): TlsTransport & { readonly bytesRead: number } {
  let bytesRead = 0;
  return {
    localAddr: conn.localAddr,
    remoteAddr: conn.remoteAddr,
    get bytesRead() {
      return bytesRead;
    },
    async read(buffer) {
      const n = await conn.read(buffer);
      bytesRead += n ?? 0;
      return n;
    },
    write: (bytes) => conn.write(bytes),
    closeWrite: () => conn.closeWrite(),
    close: () => conn.close(),
  };
}

/** A listener, a TLS client of it, and the server side of that client's connection. */
async function connected(alpnProtocols: string[]) {
  const pair = await selfSignedLoopback();
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const accepted = listener.accept();
  const client = await Deno.connectTls({
    hostname: "127.0.0.1",
    port: (listener.addr as Deno.NetAddr).port,
    caCerts: [pair.cert],
    alpnProtocols,
  });
  const server = counted(await accepted);
  listener.close();
  return { terminator: new TlsTerminator(pair), client, server };
}

Deno.test("TlsTerminator offers h2 in ALPN and hands back the decrypted connection", async () => {
  const { terminator, client, server } = await connected(["h2"]);
  const handshake = terminator.accept(server, new PendingWrites());
  try {
    const [secured, info] = await Promise.all([handshake.secured, client.handshake()]);
    assert.equal(info.alpnProtocol, "h2");
    await client.write(encode("ping"));
    const chunk = new Uint8Array(16);
    const n = await secured.read(chunk);
    assert.equal(new TextDecoder().decode(chunk.subarray(0, n ?? 0)), "ping");
    await secured.write(encode("pong"));
    const m = await client.read(chunk);
    assert.equal(new TextDecoder().decode(chunk.subarray(0, m ?? 0)), "pong");
  } finally {
    handshake.destroy();
    client.close();
  }
});

Deno.test("TlsTerminator reads no more of a client's socket than its reader takes, and a little ahead", async () => {
  const { terminator, client, server } = await connected(["http/1.1"]);
  const handshake = terminator.accept(server, new PendingWrites());
  try {
    await Promise.all([handshake.secured, client.handshake()]);
    // The client writes 16 MiB that nothing on the server reads.
    const block = new Uint8Array(1024 * 1024);
    const writing = (async () => {
      for (let i = 0; i < 16; i++) await client.write(block);
    })().catch(() => {});
    let last = -1;
    let steady = 0;
    await waitFor(
      () => {
        steady = server.bytesRead === last ? steady + 1 : 0;
        last = server.bytesRead;
        return server.bytesRead > 0 && steady >= 10;
      },
      "reading to stop",
      10_000,
      20,
    );
    // The reader's 64 KiB and a read ahead (82 KiB here); without the gate the TLS layer read 1 MiB and more.
    assert.ok(server.bytesRead < 256 * 1024, `read ${server.bytesRead} bytes that nothing took`);
    handshake.destroy();
    client.close();
    await writing;
  } finally {
    handshake.destroy();
    try {
      client.close();
    } catch {
      // closed above
    }
  }
});

Deno.test("A TLS handshake given up fails and closes the client's socket", async () => {
  const pair = await selfSignedLoopback();
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const client = await Deno.connect({ hostname: "127.0.0.1", port: (listener.addr as Deno.NetAddr).port });
  const server = await listener.accept();
  listener.close();
  try {
    await client.write(encode("\x16\x03\x01")); // the start of a ClientHello, then nothing
    const handshake = new TlsTerminator(pair).accept(server, new PendingWrites());
    handshake.destroy();
    await assert.rejects(handshake.secured);
    assert.equal(await client.read(new Uint8Array(16)), null);
  } finally {
    client.close();
  }
});
