import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { bypassGoawayOnConnect, bypassGoawayOnSessions } from "./goaway_bypass.ts";
import { waitFor } from "../shared/testing/wait_for.ts";
import { EchoTestClient, startEchoServer } from "../shared/grpc/_test_echo_service.ts";

/** What one session heard of GOAWAY frames: each as code, last stream id and debug data. */
type Heard = [number, number, string][];

function listen(
  server: http2.Http2Server,
): Promise<number> {
  server.on("stream", (stream) => {
    stream.respond({ ":status": 200 });
    stream.end("ok");
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port))
  );
}

function request(session: http2.ClientHttp2Session): Promise<void> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ":path": "/" });
    stream.on("data", () => {});
    stream.on("end", resolve);
    stream.on("error", reject);
  });
}

function closeServer(server: http2.Http2Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

Deno.test("A server session with the bypass tells of a client's GOAWAY but its runtime does not act on it", async () => {
  const server = http2.createServer();
  bypassGoawayOnSessions(server);
  const heard: Heard = [];
  let serverSession: http2.ServerHttp2Session | undefined;
  server.on("session", (session) => {
    serverSession = session;
    session.on(
      "goaway",
      (code: number, last: number, data: Buffer) => heard.push([code, last, String(data)]),
    );
  });
  const port = await listen(server);
  const client = http2.connect(`http://127.0.0.1:${port}`);
  client.on("error", () => {});
  try {
    await request(client);
    client.goaway(0, 0, Buffer.from("leaving"));
    await waitFor(() => heard.length === 1, "the client's GOAWAY heard by the server session");
    assert.deepEqual(heard, [[0, 0, "leaving"]]);
    // The runtime closes a session on a GOAWAY it read; nghttp2 never read this one.
    await request(client);
    assert.equal(serverSession?.closed, false, "the session serves on until its client leaves");
  } finally {
    client.close();
    await closeServer(server);
  }
});

Deno.test("A client session with the bypass tells of its server's GOAWAY with its code, last stream and debug data", async () => {
  const server = http2.createServer();
  server.on("session", (session) => {
    session.once("stream", () => setTimeout(() => session.goaway(0, 1, Buffer.from("restarting")), 10));
  });
  const port = await listen(server);
  const undo = bypassGoawayOnConnect(http2);
  const heard: Heard = [];
  let client: http2.ClientHttp2Session | undefined;
  try {
    client = http2.connect(`http://127.0.0.1:${port}`);
    client.on("error", () => {});
    client.on("goaway", (code: number, last: number, data: Buffer) => heard.push([code, last, String(data)]));
    await request(client);
    await waitFor(() => heard.length === 1, "the server's GOAWAY heard by the client session");
    assert.deepEqual(heard, [[0, 1, "restarting"]]);
    assert.equal(client.closed, false, "the runtime did not close the session on the frame");
  } finally {
    undo();
    client?.close();
    await closeServer(server);
  }
});

Deno.test("A grpc-js channel with the bypass takes its next call to a new connection after its server's GOAWAY", async () => {
  // The server says GOAWAY 100 ms into each connection and serves on it for a minute more: only a channel that
  // heard the GOAWAY opens a new connection for its next call.
  const { server } = await startEchoServer({
    keepalive: {
      intervalMs: 60_000,
      timeoutMs: 20_000,
      maxConnectionAgeMs: 100,
      maxConnectionAgeGraceMs: 60_000,
    },
  });
  const undo = bypassGoawayOnConnect(http2);
  const peers: number[] = [];
  const client = new EchoTestClient(`127.0.0.1:${server.port}`);
  try {
    const sessions = new Set<http2.ClientHttp2Session>();
    const seen = http2.connect;
    http2.connect = ((...args: Parameters<typeof http2.connect>) => {
      const session = seen(...args);
      sessions.add(session);
      session.once("connect", () => peers.push(session.socket.localPort ?? 0));
      return session;
    }) as typeof http2.connect;
    await client.unary("Echo", Uint8Array.of(1));
    const [first] = sessions;
    let heard = false;
    first.once("goaway", () => heard = true);
    await waitFor(() => heard, "the server's GOAWAY heard on the channel's connection");
    await waitFor(async () => {
      // A call the old connection's server no longer serves would wait out the grace: it fails instead.
      await client.unary("Echo", Uint8Array.of(2), 5_000);
      return peers.length >= 2;
    }, "a call on a new connection");
    assert.notEqual(peers[1], peers[0]);
    http2.connect = seen;
  } finally {
    undo();
    client.close();
    await server.close(0);
  }
});

Deno.test("Undoing the client bypass leaves new sessions to the runtime", () => {
  const connect = http2.connect;
  const undo = bypassGoawayOnConnect(http2);
  assert.notEqual(http2.connect, connect);
  undo();
  assert.equal(http2.connect, connect);
});
