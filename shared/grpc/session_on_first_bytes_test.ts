import "reflect-metadata";
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import net from "node:net";
import tls from "node:tls";
import http2 from "node:http2";
import { openSessionsOnFirstBytes } from "./session_on_first_bytes.ts";
import { SERVER_NAME, testPki } from "./_test_pki.ts";
import { waitFor } from "../testing/wait_for.ts";

type AnyHttp2Server = http2.Http2Server | http2.Http2SecureServer;

/** Serves "ok" on every stream and counts the sessions the runtime opened. */
async function serving(server: AnyHttp2Server, secure: boolean) {
  openSessionsOnFirstBytes(server, secure);
  const counts = { sessions: 0, closedSockets: 0 };
  server.on("session", () => counts.sessions++);
  server.on("connection", (socket: net.Socket) => socket.once("close", () => counts.closedSockets++));
  server.on("stream", (stream) => {
    stream.respond({ ":status": 200 });
    stream.end("ok");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as AddressInfo).port, counts };
}

async function get(session: http2.ClientHttp2Session): Promise<string> {
  const request = session.request({ ":path": "/" });
  let body = "";
  request.setEncoding("utf8");
  request.on("data", (chunk: string) => body += chunk);
  await new Promise((resolve, reject) => request.on("end", resolve).on("error", reject));
  return body;
}

/** Asserts that a client connecting to `url` is served, twice on one connection. */
async function assertServed(url: string, options: http2.SecureClientSessionOptions = {}): Promise<void> {
  const client = http2.connect(url, options);
  try {
    assert.equal(await get(client), "ok", "a client that speaks is served, its first bytes read once");
    assert.equal(await get(client), "ok");
  } finally {
    client.close();
  }
}

async function closeServer(server: AnyHttp2Server): Promise<void> {
  await new Promise((resolve) => server.close(resolve));
}

Deno.test("A plaintext connection that closes before its first byte never gets an HTTP/2 session", async () => {
  const server = http2.createServer();
  const { port, counts } = await serving(server, false);
  try {
    for (let i = 0; i < 5; i++) {
      const socket = net.connect(port, "127.0.0.1");
      await new Promise((resolve) => socket.once("connect", resolve));
      socket.destroy();
    }
    await waitFor(() => counts.closedSockets === 5, "the silent connections to close");
    assert.equal(counts.sessions, 0);

    await assertServed(`http://127.0.0.1:${port}`);
    assert.equal(counts.sessions, 1);
  } finally {
    await closeServer(server);
  }
});

Deno.test("A TLS connection that closes after its handshake without a byte never gets an HTTP/2 session", async () => {
  const pki = await testPki();
  const server = http2.createSecureServer({ key: pki.server.keyPem, cert: pki.server.certPem });
  const { port, counts } = await serving(server, true);
  try {
    for (let i = 0; i < 3; i++) {
      const socket = tls.connect({
        port,
        host: "127.0.0.1",
        servername: SERVER_NAME,
        ca: pki.caPem,
        ALPNProtocols: ["h2"],
      });
      await new Promise((resolve, reject) => socket.once("secureConnect", resolve).once("error", reject));
      socket.destroy();
    }
    await waitFor(() => counts.closedSockets === 3, "the silent connections to close");
    assert.equal(counts.sessions, 0);

    await assertServed(`https://127.0.0.1:${port}`, { ca: pki.caPem, servername: SERVER_NAME });
    assert.equal(counts.sessions, 1);
  } finally {
    await closeServer(server);
  }
});

Deno.test("A connection reset before its first byte ends alone, without an unhandled socket error", async () => {
  const server = http2.createServer();
  const { port, counts } = await serving(server, false);
  try {
    const socket = net.connect(port, "127.0.0.1");
    await new Promise((resolve) => socket.once("connect", resolve));
    socket.resetAndDestroy();
    await waitFor(() => counts.closedSockets === 1, "the reset connection to close");
    await assertServed(`http://127.0.0.1:${port}`);
  } finally {
    await closeServer(server);
  }
});

Deno.test("openSessionsOnFirstBytes refuses a server whose runtime starts no session from the event", () => {
  const server = http2.createServer();
  server.removeAllListeners("connection");
  assert.throws(
    () => openSessionsOnFirstBytes(server, false),
    /starts no session from its server's "connection"/,
  );
});
