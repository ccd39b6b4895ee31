import "reflect-metadata";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import { EchoTestClient, startEchoServer } from "./_test_echo_service.ts";
import { type Pki, SERVER_NAME, serverTls, testPki } from "./_test_pki.ts";
import type { RunningGrpcServer } from "./grpc_server.ts";

const HELLO = new TextEncoder().encode("hello");

/** A client that trusts `rootsPem` for the server and presents `identity`'s client certificate. */
function client(server: RunningGrpcServer, rootsPem: string, identity: Pki["client"]): EchoTestClient {
  const enc = (text: string) => Buffer.from(text);
  const credentials = grpc.credentials.createSsl(enc(rootsPem), enc(identity.keyPem), enc(identity.certPem));
  return new EchoTestClient(server.address, credentials, { "grpc.ssl_target_name_override": SERVER_NAME });
}

async function succeeds(call: Promise<Uint8Array>): Promise<boolean> {
  try {
    await call;
    return true;
  } catch {
    return false;
  }
}

Deno.test("updateTls serves new connections with new roots and certificate, and keeps open ones", async (t) => {
  const before = await testPki("before.local");
  const after = await testPki("after.local");
  const { server } = await startEchoServer({
    tls: serverTls(before, { caPem: before.caPem, requireClientCert: true }),
  });
  const bothRoots = before.caPem + after.caPem;
  const open = client(server, bothRoots, before.client);
  try {
    await t.step("before: a client certificate of the new CA is refused", async () => {
      assert.deepEqual(await open.unary("Echo", HELLO), HELLO);
      const early = client(server, bothRoots, after.client);
      assert.equal(await succeeds(early.unary("Echo", HELLO)), false);
      early.close();
    });

    server.updateTls({
      keyPem: after.server.keyPem,
      certChainPem: after.server.certPem,
      caPem: bothRoots,
      requireClientCert: true,
    });

    await t.step("after: certificates of both CAs are accepted on new connections", async () => {
      for (const identity of [before.client, after.client]) {
        const fresh = client(server, bothRoots, identity);
        try {
          assert.deepEqual(await fresh.unary("Peer", HELLO), new Uint8Array(identity.cert.rawData));
        } finally {
          fresh.close();
        }
      }
    });
    await t.step("after: new connections get the new serving certificate", async () => {
      const trustsOnlyOld = client(server, before.caPem, before.client);
      assert.equal(await succeeds(trustsOnlyOld.unary("Echo", HELLO)), false);
      trustsOnlyOld.close();
    });
    await t.step("a connection opened before the update is still served", async () => {
      assert.deepEqual(await open.unary("Echo", HELLO), HELLO);
    });
  } finally {
    open.close();
    await server.close();
  }
});

Deno.test("updateTls is refused on a plaintext listener", async () => {
  const { server } = await startEchoServer();
  try {
    const pki = await testPki();
    assert.throws(() => server.updateTls(serverTls(pki)), /serves no TLS over TCP/);
  } finally {
    await server.close();
  }
});
