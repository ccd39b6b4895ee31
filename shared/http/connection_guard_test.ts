import assert from "node:assert/strict";
import { silentLogger } from "../log/logger.ts";
import type { ConnectionLimits } from "./connection_guard.ts";
import { serveHttp } from "./serve.ts";
import { opensslOk } from "../testing/openssl.ts";

const SHORT: ConnectionLimits = {
  handshakeTimeoutMs: 200,
  headerTimeoutMs: 200,
  idleTimeoutMs: 300,
  answerTimeoutMs: 600,
  maxHeaderBytes: 4096,
  maxConnections: 3,
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

async function withServer(body: (port: number) => Promise<void>): Promise<void> {
  const server = await serveHttp(
    "guarded",
    { hostname: "127.0.0.1", port: 0 },
    async (request) => new Response(`got ${(await request.text()).length} bytes`),
    silentLogger,
    undefined,
    undefined,
    SHORT,
  );
  try {
    await body(server.address.port);
  } finally {
    await server.shutdown();
  }
}

const encode = (text: string) => new TextEncoder().encode(text);

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
    await t.step("connections over the cap are closed at once; the others still work", async () => {
      const held = await Promise.all([1, 2, 3].map(() => Deno.connect({ hostname: "127.0.0.1", port })));
      await new Promise((resolve) => setTimeout(resolve, 50));
      const extra = await Deno.connect({ hostname: "127.0.0.1", port });
      assert.equal(await readUntilClosed(extra, 150), "");
      extra.close();
      for (const conn of held) conn.close();
      const response = await fetch(`http://127.0.0.1:${port}/`);
      assert.equal(await response.text(), "got 0 bytes");
    });
  });
});

Deno.test("A TLS client that never completes the handshake is closed", async () => {
  const { cert, key } = await selfSigned();
  const server = await serveHttp(
    "guarded tls",
    { hostname: "127.0.0.1", port: 0 },
    () => new Response("ok"),
    silentLogger,
    { cert, key },
    undefined,
    SHORT,
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

Deno.test("Over TLS, a request trickled after the handshake is cut when no answer comes in time", async (t) => {
  const { cert, key } = await selfSigned();
  const server = await serveHttp(
    "guarded tls",
    { hostname: "127.0.0.1", port: 0 },
    () => new Response("ok"),
    silentLogger,
    { cert, key },
    undefined,
    SHORT,
  );
  const connect = () =>
    Deno.connectTls({
      hostname: "127.0.0.1",
      port: server.address.port,
      caCerts: [cert],
      alpnProtocols: ["http/1.1"],
    });
  try {
    await t.step("headers trickled faster than the idle timeout are cut at the answer timeout", async () => {
      const conn = await connect();
      await conn.handshake();
      const started = Date.now();
      let sent = 0;
      const request = encode("GET / HTTP/1.1\r\nhost: x\r\nx-slow: " + "a".repeat(40));
      let cut = false;
      const trickle = (async () => {
        for (; sent < request.length && !cut; sent++) {
          await conn.write(request.subarray(sent, sent + 1)).catch(() => cut = true);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      })();
      assert.equal(await readUntilClosed(conn), "");
      cut = true;
      const elapsed = Date.now() - started;
      assert.ok(sent < request.length, "cut before the header block was complete");
      assert.ok(elapsed >= SHORT.answerTimeoutMs, `cut after ${elapsed} ms, not by the idle timeout`);
      conn.close();
      await trickle;
    });
    await t.step("a client that gets answers keeps its connection past the answer timeout", async () => {
      const conn = await connect();
      try {
        for (let i = 0; i < 3; i++) {
          await conn.write(encode("GET / HTTP/1.1\r\nhost: x\r\n\r\n"));
          const chunk = new Uint8Array(4096);
          const n = await conn.read(chunk);
          assert.match(new TextDecoder().decode(chunk.subarray(0, n ?? 0)), /^HTTP\/1.1 200/);
          await new Promise((resolve) => setTimeout(resolve, SHORT.answerTimeoutMs / 3));
        }
      } finally {
        conn.close();
      }
    });
  } finally {
    await server.shutdown();
  }
});

async function selfSigned(): Promise<{ cert: string; key: string }> {
  const dir = await Deno.makeTempDir({ prefix: "connection_guard_test_" });
  try {
    await opensslOk([
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-days",
      "1",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
      "-addext",
      "basicConstraints=critical,CA:FALSE",
      "-keyout",
      `${dir}/key.pem`,
      "-out",
      `${dir}/cert.pem`,
    ]);
    return {
      cert: await Deno.readTextFile(`${dir}/cert.pem`),
      key: await Deno.readTextFile(`${dir}/key.pem`),
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
