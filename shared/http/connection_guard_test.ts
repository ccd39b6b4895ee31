import assert from "node:assert/strict";
import { silentLogger } from "../log/logger.ts";
import type { ConnectionLimits } from "./connection_guard.ts";
import { serveHttp } from "./serve.ts";
import { selfSignedLoopback } from "../testing/openssl.ts";
import { waitFor } from "../testing/wait_for.ts";
import type { Timers } from "../time/timers.ts";
import { guardClock } from "./_guard_test_clock.ts";

const SHORT: ConnectionLimits = {
  handshakeTimeoutMs: 200,
  headerTimeoutMs: 200,
  idleTimeoutMs: 300,
  answerTimeoutMs: 600,
  maxHeaderBytes: 4096,
  maxConnections: 3,
  maxConnectionsPerPeer: 3,
};

/** Reads until the peer closes; the text received. Bounded so a connection that stays open fails the test. */
async function readUntilClosed(conn: Deno.Conn, boundMs = 10_000): Promise<string> {
  const decoder = new TextDecoder();
  const chunk = new Uint8Array(4096);
  let text = "";
  const bound = setTimeout(() => conn.close(), boundMs);
  try {
    while (true) {
      const n = await conn.read(chunk).catch(() => null);
      if (n === null) return text;
      text += decoder.decode(chunk.subarray(0, n));
    }
  } finally {
    clearTimeout(bound);
  }
}

/** Sends one request on `conn` and reads its answer from the test handler (which ends in "bytes"). */
async function exchange(conn: Deno.Conn, request: string): Promise<string> {
  await conn.write(encode(request));
  const chunk = new Uint8Array(4096);
  let text = "";
  while (!text.endsWith("bytes")) {
    const n = await conn.read(chunk);
    if (n === null) break;
    text += new TextDecoder().decode(chunk.subarray(0, n));
  }
  return text;
}

async function withServer(
  body: (port: number) => Promise<void>,
  limits: ConnectionLimits = SHORT,
  handler: (request: Request) => Promise<Response> = async (request) =>
    new Response(`got ${(await request.text()).length} bytes`),
  connectionTimers?: Timers,
): Promise<void> {
  const server = await serveHttp(
    "guarded",
    { hostname: "127.0.0.1", port: 0 },
    handler,
    silentLogger,
    undefined,
    undefined,
    { connections: limits, ...(connectionTimers && { connectionTimers }) },
  );
  try {
    await body(server.address.port);
  } finally {
    await server.shutdown();
  }
}

const encode = (text: string) => new TextEncoder().encode(text);

/**
 * Sends `bytes` one at a time, moving the guard's clock `stepMs` after the guard has taken each byte (it arms a
 * timer for every one), until the connection is closed; the number of bytes the guard took.
 */
async function trickle(
  conn: Deno.Conn,
  bytes: Uint8Array,
  guard: ReturnType<typeof guardClock>,
  stepMs: number,
): Promise<number> {
  let closed = false;
  const reading = readUntilClosed(conn).then((text) => {
    closed = true;
    return text;
  });
  let sent = 0;
  for (; sent < bytes.length; sent++) {
    const before = guard.armed();
    await conn.write(bytes.subarray(sent, sent + 1)).catch(() => closed = true);
    await waitFor(() => closed || guard.armed() > before, "the guard to take a byte");
    if (closed) break;
    guard.clock.tick(stepMs);
  }
  assert.equal(await reading, "", "closed without an answer");
  return sent;
}

Deno.test("Connections that send headers too slowly, or nothing, are closed", async (t) => {
  await withServer(async (port) => {
    await t.step("half a header block, then silence: closed without an answer", async () => {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      await conn.write(encode("GET / HTTP/1.1\r\nHost: x\r\n"));
      assert.equal(await readUntilClosed(conn), "");
      conn.close();
    });
    await t.step("a connection that never sends a byte is closed", async () => {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      assert.equal(await readUntilClosed(conn), "");
      conn.close();
    });
    await t.step("a complete request is answered, and the idle connection closed after", async () => {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      await conn.write(encode("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"));
      assert.match(await readUntilClosed(conn), /^HTTP\/1.1 200 [\s\S]*got 3 bytes$/);
      conn.close();
    });
    await t.step("a body that stops arriving: the connection is closed", async () => {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      await conn.write(encode("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc"));
      assert.doesNotMatch(await readUntilClosed(conn), /200/);
      conn.close();
    });
    await t.step("a header block over the cap is answered 431", async () => {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      await conn.write(encode(`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(8192)}\r\n`)).catch(() => 0);
      assert.match(await readUntilClosed(conn), /^HTTP\/1.1 431 /);
      conn.close();
    });
    await t.step(
      "a newcomer past the cap closes the connection idle the longest, not a busy one",
      async () => {
        const held = [];
        for (let i = 0; i < 3; i++) {
          const conn = await Deno.connect({ hostname: "127.0.0.1", port });
          assert.match(await exchange(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"), /^HTTP\/1.1 200/);
          held.push(conn);
        }
        const response = await fetch(`http://127.0.0.1:${port}/`);
        assert.equal(await response.text(), "got 0 bytes");
        assert.equal(await readUntilClosed(held[0]), "", "the oldest was closed to make room");
        for (const conn of held) conn.close();
      },
    );
  });
});

Deno.test("A TLS client that never completes the handshake is closed", async () => {
  const { cert, key } = await selfSignedLoopback();
  const server = await serveHttp(
    "guarded tls",
    { hostname: "127.0.0.1", port: 0 },
    () => new Response("ok"),
    silentLogger,
    { cert, key },
    undefined,
    { connections: SHORT },
  );
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.address.port });
    await conn.write(encode("\x16\x03\x01")); // the start of a ClientHello, then nothing
    assert.equal(await readUntilClosed(conn), "");
    conn.close();
  } finally {
    await server.shutdown();
  }
});

Deno.test("Over TLS, every request's headers must arrive within the header time, as on a plain connection", async (t) => {
  const { cert, key } = await selfSignedLoopback();
  const guard = guardClock();
  const server = await serveHttp(
    "guarded tls",
    { hostname: "127.0.0.1", port: 0 },
    () => new Response("got 0 bytes"),
    silentLogger,
    { cert, key },
    undefined,
    { connections: SHORT, connectionTimers: guard.timers },
  );
  const connect = () =>
    Deno.connectTls({
      hostname: "127.0.0.1",
      port: server.address.port,
      caCerts: [cert],
      alpnProtocols: ["http/1.1"],
    });
  try {
    await t.step(
      "a keep-alive connection's next request trickled within the idle timeout is cut",
      async () => {
        const conn = await connect();
        assert.match(await exchange(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"), /^HTTP\/1.1 200/);
        const request = encode(`GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ${"a".repeat(30)}\r\n\r\n`);
        const sent = await trickle(conn, request, guard, SHORT.idleTimeoutMs / 4);
        conn.close();
        assert.ok(sent < request.length, `closed after ${sent} of ${request.length} header bytes`);
        assert.equal(
          sent,
          Math.ceil(SHORT.headerTimeoutMs / (SHORT.idleTimeoutMs / 4)),
          "at the header time",
        );
      },
    );
    await t.step("a client whose requests are answered keeps its connection past the idle time", async () => {
      const conn = await connect();
      try {
        // Four requests, the clock moved two thirds of the idle timeout after each of the first three: each
        // answer is the probe that the connection is still open.
        for (let i = 0; i < 4; i++) {
          await conn.write(encode("GET / HTTP/1.1\r\nhost: x\r\n\r\n"));
          const chunk = new Uint8Array(4096);
          const n = await conn.read(chunk);
          assert.match(new TextDecoder().decode(chunk.subarray(0, n ?? 0)), /^HTTP\/1.1 200/);
          if (i === 3) break;
          // Once the answer is through, only the idle timer is left.
          await waitFor(() => guard.clock.countTimers() === 1, "the guard to see the answer");
          guard.clock.tick(SHORT.idleTimeoutMs * 2 / 3);
        }
      } finally {
        conn.close();
      }
    });
  } finally {
    await server.shutdown();
  }
});

Deno.test("Every request on a keep-alive connection must send its headers within the header time", async () => {
  const guard = guardClock();
  await withServer(
    async (port) => {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      assert.match(await exchange(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"), /^HTTP\/1.1 200/);
      // The next request's headers, a byte at a time, each well within the idle timeout.
      const request = encode(`GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ${"a".repeat(30)}\r\n\r\n`);
      const sent = await trickle(conn, request, guard, SHORT.idleTimeoutMs / 4);
      assert.ok(sent < request.length, `closed after ${sent} of ${request.length} header bytes`);
      assert.equal(sent, Math.ceil(SHORT.headerTimeoutMs / (SHORT.idleTimeoutMs / 4)), "at the header time");
      conn.close();
    },
    SHORT,
    undefined,
    guard.timers,
  );
});

Deno.test("One address holds at most its share of connections; its oldest idle one makes room", async (t) => {
  const release = Promise.withResolvers<void>();
  let holding = 0;
  const limits = { ...SHORT, maxConnections: 10, maxConnectionsPerPeer: 2, idleTimeoutMs: 10_000 };
  await withServer(
    async (port) => {
      const busy: Deno.Conn[] = [];
      await t.step(
        "with two requests in progress, a third connection waits the header time, then is refused",
        async () => {
          for (let i = 0; i < 2; i++) {
            const conn = await Deno.connect({ hostname: "127.0.0.1", port });
            await conn.write(encode("GET /hold HTTP/1.1\r\nHost: x\r\n\r\n"));
            busy.push(conn);
          }
          await waitFor(() => holding === 2, "two requests in progress");
          const extra = await Deno.connect({ hostname: "127.0.0.1", port });
          await extra.write(encode("GET / HTTP/1.1\r\nHost: x\r\n\r\n")).catch(() => 0);
          assert.equal(await readUntilClosed(extra), "");
          extra.close();
        },
      );
      await t.step("once they are answered and idle, a new connection closes the older one", async () => {
        release.resolve();
        for (const conn of busy) {
          const chunk = new Uint8Array(4096);
          let text = "";
          while (!text.endsWith("bytes")) {
            text += new TextDecoder().decode(chunk.subarray(0, await conn.read(chunk) ?? 0));
          }
        }
        const fresh = await Deno.connect({ hostname: "127.0.0.1", port });
        assert.match(await exchange(fresh, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"), /^HTTP\/1.1 200/);
        assert.equal(await readUntilClosed(busy[0]), "", "the older idle connection was closed");
        for (const conn of [...busy, fresh]) conn.close();
      });
    },
    limits,
    async (request) => {
      if (new URL(request.url).pathname === "/hold") {
        holding++;
        await release.promise;
      }
      return new Response("got 0 bytes");
    },
  );
});

Deno.test("A client that half-closes after its request still gets the answer", async () => {
  await withServer(async (port) => {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    await conn.write(encode("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"));
    await conn.closeWrite();
    assert.match(await readUntilClosed(conn), /^HTTP\/1.1 200 [\s\S]*got 3 bytes$/);
    conn.close();
  });
});

Deno.test("Over TLS, a listener full of answered keep-alive connections still takes a new one", async () => {
  const { cert, key } = await selfSignedLoopback();
  const server = await serveHttp(
    "guarded tls",
    { hostname: "127.0.0.1", port: 0 },
    () => new Response("got 0 bytes"),
    silentLogger,
    { cert, key },
    undefined,
    { connections: { ...SHORT, idleTimeoutMs: 10_000 } },
  );
  const held: Deno.Conn[] = [];
  const client = Deno.createHttpClient({ caCerts: [cert] });
  try {
    for (let i = 0; i < SHORT.maxConnections; i++) {
      const conn = await Deno.connectTls({
        hostname: "127.0.0.1",
        port: server.address.port,
        caCerts: [cert],
        alpnProtocols: ["http/1.1"],
      });
      held.push(conn);
      assert.match(await exchange(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"), /^HTTP\/1.1 200/);
    }
    const response = await fetch(`${server.url}/`, { client });
    assert.equal(await response.text(), "got 0 bytes");
  } finally {
    client.close();
    for (const conn of held) conn.close();
    await server.shutdown();
  }
});

Deno.test("Over TLS, an answer delimited by the server closing ends in a close_notify, not a bare close", async () => {
  // An HTTP/1.0 request gets its streamed answer delimited by the end of the connection: only a close_notify
  // tells the client that end from a truncation (a strict client fails on a bare close), as `Deno.serve`
  // ending TLS itself sent it.
  const { cert, key } = await selfSignedLoopback();
  const server = await serveHttp(
    "guarded tls",
    { hostname: "127.0.0.1", port: 0 },
    () => new Response(ReadableStream.from([encode("streamed")])),
    silentLogger,
    { cert, key },
    undefined,
    { connections: { ...SHORT, idleTimeoutMs: 10_000 } },
  );
  const conn = await Deno.connectTls({
    hostname: "127.0.0.1",
    port: server.address.port,
    caCerts: [cert],
    alpnProtocols: ["http/1.1"],
  });
  try {
    await conn.write(encode("GET / HTTP/1.0\r\n\r\n"));
    const chunk = new Uint8Array(4096);
    let text = "";
    while (true) {
      const n = await conn.read(chunk);
      if (n === null) break;
      text += new TextDecoder().decode(chunk.subarray(0, n));
    }
    assert.match(text, /^HTTP\/1.0 200 [\s\S]*\r\n\r\nstreamed$/);
  } finally {
    conn.close();
    await server.shutdown();
  }
});
