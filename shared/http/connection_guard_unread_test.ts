/**
 * The connection guard with clients that do not read what they are sent: pipelined requests are passed on one
 * at a time, a client that leaves with its answers unread leaves no backend connection behind, and a
 * connection closed while its client reads nothing keeps its slot until its socket is let go.
 */
import assert from "node:assert/strict";
import { silentLogger } from "../log/logger.ts";
import { type ConnectionLimits, startConnectionGuard } from "./connection_guard.ts";
import { serveHttp } from "./serve.ts";
import { waitFor } from "../testing/wait_for.ts";
import { guardClock } from "./_guard_test_clock.ts";
import type { Timers } from "../time/timers.ts";
import { selfSignedLoopback } from "../testing/openssl.ts";

const LIMITS: ConnectionLimits = {
  handshakeTimeoutMs: 10_000,
  headerTimeoutMs: 10_000,
  idleTimeoutMs: 10_000,
  answerTimeoutMs: 30_000,
  maxHeaderBytes: 4096,
  maxConnections: 8,
  maxConnectionsPerPeer: 8,
};

const encode = (text: string) => new TextEncoder().encode(text);
const GET = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`;

/** A guard with {@link LIMITS} in front of `backend`, ending TLS with `tls` when given. */
function guardFor(backend: { address: Deno.NetAddr }, tls?: { cert: string; key: string }) {
  return startConnectionGuard({
    listen: { hostname: "127.0.0.1", port: 0 },
    backend: backend.address,
    limits: LIMITS,
    log: silentLogger,
    name: "test",
    ...(tls && { tls }),
  });
}

/** A backend that records every byte it is sent, and on which it writes what a test asks. */
function rawBackend() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const accepted = listener.accept();
  let received = "";
  let ended = false;
  const reading = accepted.then(async (conn) => {
    const chunk = new Uint8Array(64 * 1024);
    while (true) {
      const n = await conn.read(chunk).catch(() => null);
      if (n === null) break;
      received += new TextDecoder().decode(chunk.subarray(0, n));
    }
    ended = true;
  });
  return {
    address: listener.addr as Deno.NetAddr,
    conn: () => accepted,
    received: () => received,
    ended: () => ended,
    async close() {
      listener.close();
      (await accepted.catch(() => undefined))?.close();
      await reading.catch(() => {});
    },
  };
}

for (const tls of [false, true]) {
  Deno.test(
    `The guard passes a pipelining client's next request on only once its last is answered${
      tls ? ", over TLS ended at the guard" : ""
    }`,
    async () => {
      const backend = rawBackend();
      const pair = tls ? await selfSignedLoopback() : undefined;
      const guard = guardFor(backend, pair);
      const target = { hostname: "127.0.0.1", port: guard.address.port };
      const client = pair
        ? await Deno.connectTls({ ...target, caCerts: [pair.cert], alpnProtocols: ["http/1.1"] })
        : await Deno.connect(target);
      try {
        await client.write(encode(GET("/a") + GET("/b") + GET("/c")));
        await waitFor(() => backend.received() === GET("/a"), "the first request at the backend");
        const server = await backend.conn();
        // The backend answers the first: the second follows, and only it.
        await server.write(encode("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"));
        await waitFor(
          () => backend.received() === GET("/a") + GET("/b"),
          "the second request at the backend",
        );
        await server.write(encode("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"));
        await waitFor(() => backend.received() === GET("/a") + GET("/b") + GET("/c"), "the third request");
      } finally {
        client.close();
        await guard.close();
        await backend.close();
      }
    },
  );
}

Deno.test("A client that leaves with its answers and its upload unread leaves no backend connection behind", async () => {
  // The backend writes a large answer without reading the request's body, as a handler refusing it early
  // may: the guard's write of the body waits on the backend, the backend's on the guard, the guard's on a
  // client that reads nothing. A close does not end a socket with a write in progress, so when the client
  // left, the guard's connection to the backend stayed open, and the backend stuck, for good.
  const backend = rawBackend();
  const guard = guardFor(backend);
  const client = await Deno.connect({ hostname: "127.0.0.1", port: guard.address.port });
  const body = new Uint8Array(32 * 1024 * 1024);
  const uploading = client.write(
    encode(`POST /up HTTP/1.1\r\nHost: x\r\ncontent-length: ${body.length}\r\n\r\n`),
  )
    .then(async () => {
      let sent = 0;
      while (sent < body.length) sent += await client.write(body.subarray(sent));
    }).catch(() => {});
  const server = await backend.conn();
  const answer = new Uint8Array(32 * 1024 * 1024);
  const answering = (async () => {
    await server.write(encode(`HTTP/1.1 413 Too Large\r\ncontent-length: ${answer.length}\r\n\r\n`));
    let sent = 0;
    while (sent < answer.length) sent += await server.write(answer.subarray(sent));
  })().catch(() => {});
  try {
    // Every buffer on the way fills, then the client leaves without reading a byte.
    await waitFor(() => backend.received().length > 1024 * 1024, "the upload to reach the backend");
    client.close();
    await waitFor(() => backend.ended(), "the backend to see its connection end", 20_000);
    await waitFor(() => guard.serving === 0, "the guard to end the connection", 20_000);
  } finally {
    await guard.close();
    await backend.close();
    await Promise.all([uploading, answering]);
  }
});

Deno.test("A connection closed while its client reads nothing keeps its slot until its socket is let go", async (t) => {
  const { clock, timers, armed } = guardClock();
  const limits = { ...LIMITS, maxConnectionsPerPeer: 1, headerTimeoutMs: 1_000 };
  const big = new Uint8Array(64 * 1024 * 1024);
  const server = await serveHttp(
    "guarded",
    { hostname: "127.0.0.1", port: 0 },
    (request) =>
      Promise.resolve(new URL(request.url).pathname === "/big" ? new Response(big) : new Response("ok")),
    silentLogger,
    undefined,
    undefined,
    { connections: limits, connectionTimers: timers },
  );
  const port = server.address.port;
  const reader = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await t.step("the idle timeout closes a connection whose client stopped reading", async () => {
      await reader.write(encode(GET("/big")));
      // The answer fills the buffers on the way, then nothing moves: the guard re-arms its idle timer for every
      // chunk it relays, and stops.
      let last = -1;
      await waitFor(
        () => {
          const still = armed() === last;
          last = armed();
          return still && armed() > 0;
        },
        "the answer to stall",
        20_000,
        250,
      );
      clock.tick(limits.idleTimeoutMs);
    });

    await t.step("another connection from the address is not served while that socket is open", async () => {
      const second = await Deno.connect({ hostname: "127.0.0.1", port });
      await second.write(encode(GET("/"))).catch(() => 0);
      // Refused, at once or once it has waited the header time for the slot. Were it given the slot, its
      // answer would come on its own: time for that passes before the guard's clock is moved.
      const chunk = new Uint8Array(1024);
      let answer: number | null | undefined;
      second.read(chunk).catch(() => null).then((n) => answer = n);
      const unansweredUntil = Date.now() + 300;
      await waitFor(() => {
        if (answer === undefined && Date.now() > unansweredUntil) clock.tick(limits.headerTimeoutMs);
        return answer !== undefined;
      }, "the connection to be refused");
      assert.equal(answer, null, "closed without an answer");
      second.close();
    });

    await t.step("once the client lets its socket go, the address is served again", async () => {
      reader.close();
      await waitFor(
        async () => {
          const third = await Deno.connect({ hostname: "127.0.0.1", port });
          try {
            await third.write(encode(GET("/")));
            const chunk = new Uint8Array(1024);
            const n = await Promise.race([
              third.read(chunk),
              new Promise<null>((resolve) => setTimeout(() => resolve(null), 200)),
            ]).catch(() => null);
            if (n === null) {
              clock.tick(limits.headerTimeoutMs);
              return false;
            }
            return new TextDecoder().decode(chunk.subarray(0, n)).startsWith("HTTP/1.1 200");
          } finally {
            third.close();
          }
        },
        "a new connection to be served",
        20_000,
      );
    });
  } finally {
    try {
      reader.close();
    } catch {
      // closed by the last step
    }
    await server.shutdown();
  }
});

/**
 * A guard with `limits` whose connections to `backend` open only once `gate` resolves; `dialing` resolves when
 * one is asked for.
 */
function guardWithSlowDial(
  backend: { address: Deno.NetAddr },
  limits: ConnectionLimits,
  timers: Timers,
  pair?: { cert: string; key: string },
) {
  const dialing = Promise.withResolvers<void>();
  const gate = Promise.withResolvers<void>();
  const guard = startConnectionGuard({
    listen: { hostname: "127.0.0.1", port: 0 },
    backend: backend.address,
    limits,
    log: silentLogger,
    name: "test",
    timers,
    ...(pair && { tls: pair }),
    dial: async (address) => {
      dialing.resolve();
      await gate.promise;
      return Deno.connect(address);
    },
  });
  return { guard, dialing: dialing.promise, open: () => gate.resolve() };
}

/** Closes `guard`, moving `clock` until it has (closing waits its grace on the guard's clock). */
async function closeOnClock(guard: { close(): Promise<void> }, clock: { tick(ms: number): unknown }) {
  let closed = false;
  const closing = guard.close().then(() => closed = true);
  await waitFor(() => (clock.tick(1_000), closed), "the guard to close");
  await closing;
}

for (const tls of [false, true]) {
  const over = tls ? ", over TLS ended at the guard" : "";
  const connect = (port: number, pair?: { cert: string }) =>
    pair
      ? Deno.connectTls({ hostname: "127.0.0.1", port, caCerts: [pair.cert], alpnProtocols: ["http/1.1"] })
      : Deno.connect({ hostname: "127.0.0.1", port });

  Deno.test(`A connection closed while the guard connects to the backend leaves no backend connection behind${over}`, async () => {
    // A connection can be closed while its backend connection opens (its idle timer, the guard closing); that
    // one was then relayed to and never closed: the backend kept it, and the guard its task, for good.
    const backend = rawBackend();
    const pair = tls ? await selfSignedLoopback() : undefined;
    const { clock, timers } = guardClock();
    const { guard, dialing, open } = guardWithSlowDial(backend, LIMITS, timers, pair);
    const client = await connect(guard.address.port, pair);
    try {
      await client.write(encode(GET("/")));
      await dialing;
      clock.tick(LIMITS.idleTimeoutMs);
      assert.equal(await client.read(new Uint8Array(16)).catch(() => null), null, "the client was closed");
      open();
      await waitFor(() => backend.ended(), "the backend connection to be closed");
      await waitFor(() => guard.serving === 0, "the guard to end the connection");
    } finally {
      open();
      client.close();
      await closeOnClock(guard, clock);
      await backend.close();
    }
  });

  Deno.test(`A request that arrived within the header time is not cut by it while the backend connection opens${over}`, async () => {
    const backend = rawBackend();
    const pair = tls ? await selfSignedLoopback() : undefined;
    const { clock, timers } = guardClock();
    const limits = { ...LIMITS, headerTimeoutMs: 1_000 };
    const { guard, dialing, open } = guardWithSlowDial(backend, limits, timers, pair);
    const client = await connect(guard.address.port, pair);
    try {
      await client.write(encode(GET("/")));
      await dialing;
      clock.tick(limits.headerTimeoutMs * 2);
      open();
      await waitFor(() => backend.received() === GET("/"), "the request at the backend");
      const server = await backend.conn();
      await server.write(encode("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"));
      const chunk = new Uint8Array(256);
      const n = await client.read(chunk);
      assert.match(new TextDecoder().decode(chunk.subarray(0, n ?? 0)), /^HTTP\/1.1 200 OK/);
    } finally {
      open();
      client.close();
      await closeOnClock(guard, clock);
      await backend.close();
    }
  });
}
