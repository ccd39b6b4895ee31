import "reflect-metadata";
import { Buffer } from "node:buffer";
import assert from "node:assert/strict";
import { EchoTestClient, startEchoServer } from "./_test_echo_service.ts";
import FakeTimers from "@sinonjs/fake-timers";
import { waitFor } from "../testing/wait_for.ts";
import { timersOf } from "../testing/fake_timers.ts";
import { serverTls, testPki, tlsClient } from "./_test_pki.ts";
import type { PeerDrop } from "./peer_guard.ts";

const HELLO = new TextEncoder().encode("hello");

/** Opens a raw TCP connection to `address` and writes `bytes`; resolves once the server has closed it. */
async function sendRaw(address: string, bytes: Uint8Array): Promise<void> {
  const [hostname, port] = address.split(":");
  const conn = await Deno.connect({ hostname, port: Number(port) });
  try {
    await conn.write(bytes);
    const buffer = new Uint8Array(4096);
    // The server answers (SETTINGS, GOAWAY) and then closes; read until it does.
    while ((await conn.read(buffer)) !== null) { /* drain */ }
  } catch {
    // A reset is a close too.
  } finally {
    try {
      conn.close();
    } catch {
      // Already closed.
    }
  }
}

const PREFACE = new TextEncoder().encode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

/** Connects to `address` and sends nothing; resolves with how long the server took to close the connection. */
async function stayQuiet(address: string): Promise<void> {
  await sendRaw(address, new Uint8Array(0));
}

/** Starts an echo server that records the peers it drops. */
async function startRecording(parts: Parameters<typeof startEchoServer>[0] = {}) {
  const drops: PeerDrop[] = [];
  const started = await startEchoServer({ onPeerDropped: (drop) => drops.push(drop), ...parts });
  return { ...started, drops };
}

/** Writes `payload` on a held stream; its echo, or a rejection when the stream ends first. */
function echoOn(held: ReturnType<EchoTestClient["hold"]>, payload: Uint8Array): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    held.once("data", (b: Uint8Array) => resolve(new Uint8Array(b)));
    held.once("error", (error: Error) => reject(error));
    held.once("end", () => reject(new Error("The held stream ended before its echo")));
    held.write(Buffer.from(payload));
  });
}

const reasons = (drops: PeerDrop[]) => drops.map((d) => `${d.reason} ${d.detail}`);

Deno.test("a peer that breaks the protocol loses its own connection only, and is counted", async (t) => {
  const { server, holds, drops } = await startRecording();
  const client = new EchoTestClient(server.address);
  try {
    const held = client.hold();
    await waitFor(() => holds.open === 1, "a stream of a well-behaved peer open");
    const echoed = new Promise<Uint8Array>((resolve) => held.once("data", (b: Uint8Array) => resolve(b)));

    await t.step("bytes that are not HTTP/2 at all", async () => {
      await sendRaw(server.address, new TextEncoder().encode("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
      await waitFor(() => drops.length === 1, "the drop reported");
      assert.equal(drops[0].reason, "not_http2");
      assert.match(drops[0].detail, /magic/);
      assert.match(drops[0].peer, /^127\.0\.0\.1:\d+$/);
    });
    await t.step("a DATA frame on stream 0 (a connection error)", async () => {
      const data = Uint8Array.from([0, 0, 4, 0x0, 0, 0, 0, 0, 0, 1, 2, 3, 4]);
      await sendRaw(server.address, Uint8Array.from([...PREFACE, 0, 0, 0, 0x4, 0, 0, 0, 0, 0, ...data]));
      await waitFor(() => drops.length === 2, "the drop reported");
      assert.deepEqual(reasons(drops.slice(1)), ["protocol_error PROTOCOL_ERROR"]);
    });
    await t.step("a frame longer than the peer may send", async () => {
      const header = Uint8Array.from([0xff, 0xff, 0xff, 0x0, 0, 0, 0, 0, 1]);
      await sendRaw(server.address, Uint8Array.from([...PREFACE, 0, 0, 0, 0x4, 0, 0, 0, 0, 0, ...header]));
      await waitFor(() => drops.length === 3, "the drop reported");
      assert.deepEqual(reasons(drops.slice(2)), ["protocol_error FRAME_SIZE_ERROR"]);
    });

    await t.step("the other peer's stream and new calls are still served, and are not counted", async () => {
      held.write(Buffer.from(HELLO));
      assert.deepEqual(new Uint8Array(await echoed), HELLO);
      assert.equal(holds.open, 1);
      const fresh = new EchoTestClient(server.address);
      try {
        assert.deepEqual(await fresh.unary("Echo", HELLO), HELLO);
      } finally {
        fresh.close();
      }
      assert.equal(drops.length, 3);
    });
    held.end();
  } finally {
    client.close();
    await server.close();
  }
  assert.equal(drops.length, 3, "a graceful shutdown drops no peer for misbehaving");
});

Deno.test("a peer that connects and stays silent is cut at the handshake timeout; one past it is kept", async () => {
  const clock = FakeTimers.createClock();
  const { server, drops, holds } = await startRecording({
    handshakeTimeoutMs: 200,
    handshakeTimers: timersOf(clock),
  });
  try {
    const quiet = stayQuiet(server.address);
    await waitFor(() => clock.countTimers() === 1, "the silent peer's handshake timed");
    clock.tick(200);
    await quiet;
    await waitFor(() => drops.length === 1, "the drop reported");
    assert.equal(drops[0].reason, "handshake_timeout");
    assert.match(drops[0].detail, /within 200ms/);
    const client = new EchoTestClient(server.address);
    try {
      const held = client.hold();
      await waitFor(() => holds.open === 1, "a stream of a peer past its handshake open");
      clock.tick(10_000);
      assert.deepEqual(await echoOn(held, HELLO), HELLO, "a peer past its handshake keeps its connection");
      held.end();
    } finally {
      client.close();
    }
    assert.equal(drops.length, 1);
  } finally {
    await server.close();
  }
});

Deno.test("on a TLS port, garbage and a stalled handshake are dropped and counted", async (t) => {
  const pki = await testPki();
  const { server, drops } = await startRecording({ tls: serverTls(pki), handshakeTimeoutMs: 300 });
  try {
    await t.step("bytes that are not TLS", async () => {
      await sendRaw(server.address, new TextEncoder().encode("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
      await waitFor(() => drops.length === 1, "the drop reported");
      assert.equal(drops[0].reason, "tls_error");
    });
    await t.step("a peer that never starts the handshake", async () => {
      await stayQuiet(server.address);
      await waitFor(() => drops.length === 2, "the drop reported");
      assert.equal(drops[1].reason, "handshake_timeout");
    });
    await t.step("a TLS peer is served and not counted", async () => {
      const client = tlsClient(server, pki);
      try {
        assert.deepEqual(await client.unary("Echo", HELLO), HELLO);
      } finally {
        client.close();
      }
      assert.equal(drops.length, 2);
    });
  } finally {
    await server.close();
  }
});

Deno.test("startGrpcServer refuses a handshake timeout out of range, naming it", async () => {
  await assert.rejects(
    () => startEchoServer({ handshakeTimeoutMs: 0 }),
    /handshake timeout "0ms": expected 1 to/,
  );
});
