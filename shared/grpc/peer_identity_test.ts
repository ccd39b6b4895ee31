import "reflect-metadata";
import { Buffer } from "node:buffer";
import assert from "node:assert/strict";
import type * as grpc from "@grpc/grpc-js";
import { type PeerCall, peerHost } from "./peer_identity.ts";
import { ECHO_DEFINITION, EchoTestClient, startEchoServer } from "./_test_echo_service.ts";

const called = (peer: string) => ({ getPeer: () => peer, getAuthContext: () => ({}) }) as unknown as PeerCall;

Deno.test("peerHost is the caller's IP address without its port, and nothing on a Unix socket", () => {
  assert.equal(peerHost(called("10.1.2.3:53412")), "10.1.2.3");
  assert.equal(peerHost(called("::ffff:10.1.2.3:53412")), "::ffff:10.1.2.3");
  assert.equal(peerHost(called("[2001:db8::1]:443")), "2001:db8::1");
  assert.equal(peerHost(called("/var/run/mesh/sds.sock")), undefined);
  assert.equal(peerHost(called("unknown")), undefined);
});

Deno.test("peerHost reads a real call's address", async () => {
  const seen: (string | undefined)[] = [];
  const reply = (call: grpc.ServerUnaryCall<unknown, unknown>, done: grpc.sendUnaryData<unknown>) => {
    seen.push(peerHost(call));
    done(null, Buffer.alloc(0));
  };
  const { server } = await startEchoServer({
    services: [{ definition: ECHO_DEFINITION, implementation: { Echo: reply, Peer: reply, Hold: () => {} } }],
  });
  const client = new EchoTestClient(server.address);
  try {
    await client.unary("Echo", new Uint8Array(1));
    assert.deepEqual(seen, ["127.0.0.1"]);
  } finally {
    client.close();
    await server.close();
  }
});
