import "reflect-metadata";
import { Buffer } from "node:buffer";
import assert from "node:assert/strict";
import * as grpc from "@grpc/grpc-js";
import { createSelfSignedCa, issueCertificate } from "../pki/mod.ts";
import { exportPrivateKeyPem } from "../pki/private_key_pem.ts";
import { certificatesToPem } from "../pki/certificate_pem.ts";
import { generateKeyPair } from "../pki/key_pair.ts";
import { silentLogger } from "../log/logger.ts";
import {
  GrpcListenError,
  type GrpcServerOptions,
  type RunningGrpcServer,
  startGrpcServer,
} from "./grpc_server.ts";
import { echoService, EchoTestClient, waitUntil } from "./_test_echo_service.ts";
import type { GrpcTls } from "./server_credentials.ts";

const HELLO = new TextEncoder().encode("hello");

async function start(parts: Partial<GrpcServerOptions> = {}) {
  const { service, holds } = echoService();
  const server = await startGrpcServer({
    name: "Echo",
    listen: { tcp: "127.0.0.1:0", flag: "--testAddr" },
    services: [service],
    logger: silentLogger,
    ...parts,
  });
  return { server, holds };
}

/** The name in the server certificate; clients dial 127.0.0.1 and check this name (TLS forbids an IP as SNI). */
const SERVER_NAME = "echo.mesh.test";

/** A CA, a server certificate for SERVER_NAME and a client certificate, as PEM. */
async function testPki(org = "test.local") {
  const ca = await createSelfSignedCa({ org, ttlMs: 3_600_000, keyAlgorithm: "ECDSA" });
  const leaf = async (usage: "server" | "client", names: { dnsNames?: string[]; uris?: string[] }) => {
    const keys = await generateKeyPair({ algorithm: "ECDSA" });
    const cert = await issueCertificate(ca, {
      ...names,
      publicKey: keys.publicKey,
      ttlMs: 3_600_000,
      usages: [usage],
    });
    return { keyPem: await exportPrivateKeyPem(keys.privateKey), certPem: certificatesToPem([cert]), cert };
  };
  return {
    caPem: ca.certificatePem,
    server: await leaf("server", { dnsNames: [SERVER_NAME] }),
    client: await leaf("client", { uris: ["spiffe://test.local/ns/default/sa/client"] }),
  };
}

type Pki = Awaited<ReturnType<typeof testPki>>;

function serverTls(pki: Pki, extra: Partial<GrpcTls> = {}): GrpcTls {
  return { keyPem: pki.server.keyPem, certChainPem: pki.server.certPem, ...extra };
}

function tlsClient(server: RunningGrpcServer, pki: Pki, clientCert?: Pki["client"]): EchoTestClient {
  const enc = (text: string) => Buffer.from(text);
  const credentials = clientCert
    ? grpc.credentials.createSsl(enc(pki.caPem), enc(clientCert.keyPem), enc(clientCert.certPem))
    : grpc.credentials.createSsl(enc(pki.caPem));
  return new EchoTestClient(server.address, credentials, { "grpc.ssl_target_name_override": SERVER_NAME });
}

async function statusOf(call: Promise<unknown>): Promise<number> {
  try {
    await call;
    return grpc.status.OK;
  } catch (error) {
    return (error as grpc.ServiceError).code;
  }
}

Deno.test("startGrpcServer serves its services over plaintext TCP", async () => {
  const { server } = await start();
  const client = new EchoTestClient(server.address);
  try {
    assert.ok(server.port > 0);
    assert.equal(server.address, `127.0.0.1:${server.port}`);
    assert.deepEqual(await client.unary("Echo", HELLO), HELLO);
    assert.equal((await client.unary("Peer", HELLO)).length, 0, "no peer certificate on plaintext");
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("startGrpcServer serves on a Unix socket and replaces a stale socket file", async () => {
  const dir = await Deno.makeTempDir({ prefix: "grpc_server_test_" });
  const path = `${dir}/echo.sock`;
  const stale = Deno.listen({ transport: "unix", path });
  stale.close();
  const { server } = await start({ listen: { unix: path, flag: "--socket" } });
  const client = new EchoTestClient(server.address);
  try {
    assert.equal(server.address, `unix:${path}`);
    assert.equal(server.port, 0);
    assert.deepEqual(await client.unary("Echo", HELLO), HELLO);
  } finally {
    client.close();
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("startGrpcServer leaves a regular file at the socket path alone and names the flag", async () => {
  const dir = await Deno.makeTempDir({ prefix: "grpc_server_test_" });
  const path = `${dir}/not-a-socket`;
  await Deno.writeTextFile(path, "keep me");
  try {
    await assert.rejects(start({ listen: { unix: path, flag: "--socket" } }), (error: Error) => {
      assert.ok(error instanceof GrpcListenError);
      assert.match(error.message, /Cannot serve Echo on ".*not-a-socket" \(--socket\)/);
      return true;
    });
    assert.equal(await Deno.readTextFile(path), "keep me");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("startGrpcServer names the server, the address and the flag when the port is taken", async () => {
  const { server } = await start();
  try {
    await assert.rejects(
      start({ listen: { tcp: server.address, flag: "--testAddr" } }),
      (error: Error) => {
        assert.ok(error instanceof GrpcListenError);
        assert.match(error.message, new RegExp(`Cannot serve Echo on "${server.address}" \\(--testAddr\\)`));
        return true;
      },
    );
    await assert.rejects(start({ listen: { tcp: "nonsense", flag: "--testAddr" } }), /Invalid --testAddr/);
  } finally {
    await server.close();
  }
});

Deno.test("startGrpcServer serves TLS", async (t) => {
  const pki = await testPki();

  await t.step(
    "without client certificates: a TLS client is served and has no peer certificate",
    async () => {
      const { server } = await start({ tls: serverTls(pki) });
      const client = tlsClient(server, pki);
      try {
        assert.deepEqual(await client.unary("Echo", HELLO), HELLO);
        assert.equal((await client.unary("Peer", HELLO)).length, 0);
      } finally {
        client.close();
        await server.close();
      }
    },
  );

  await t.step("a plaintext client is not served on a TLS listener", async () => {
    const { server } = await start({ tls: serverTls(pki) });
    const client = new EchoTestClient(server.address);
    try {
      assert.equal(await statusOf(client.unary("Echo", HELLO)), grpc.status.UNAVAILABLE);
    } finally {
      client.close();
      await server.close();
    }
  });

  await t.step(
    "optional client certificates: a verified one reaches the handler, none is accepted",
    async () => {
      const { server } = await start({ tls: serverTls(pki, { caPem: pki.caPem }) });
      const withCert = tlsClient(server, pki, pki.client);
      const withoutCert = tlsClient(server, pki);
      try {
        assert.deepEqual(await withCert.unary("Peer", HELLO), new Uint8Array(pki.client.cert.rawData));
        assert.deepEqual(await withoutCert.unary("Echo", HELLO), HELLO);
        assert.equal((await withoutCert.unary("Peer", HELLO)).length, 0);
      } finally {
        withCert.close();
        withoutCert.close();
        await server.close();
      }
    },
  );

  await t.step("optional client certificates: one from another CA is not handed to the handler", async () => {
    const other = await testPki("other.local");
    const { server } = await start({ tls: serverTls(pki, { caPem: pki.caPem }) });
    const stranger = tlsClient(server, pki, other.client);
    try {
      assert.equal((await stranger.unary("Peer", HELLO)).length, 0);
    } finally {
      stranger.close();
      await server.close();
    }
  });

  await t.step("required client certificates: a client without one is refused", async () => {
    const { server } = await start({ tls: serverTls(pki, { caPem: pki.caPem, requireClientCert: true }) });
    const withCert = tlsClient(server, pki, pki.client);
    const withoutCert = tlsClient(server, pki);
    try {
      assert.deepEqual(await withCert.unary("Peer", HELLO), new Uint8Array(pki.client.cert.rawData));
      assert.equal(await statusOf(withoutCert.unary("Echo", HELLO)), grpc.status.UNAVAILABLE);
    } finally {
      withCert.close();
      withoutCert.close();
      await server.close();
    }
  });

  await t.step("requiring client certificates without roots stops startup", async () => {
    await assert.rejects(
      start({ tls: serverTls(pki, { requireClientCert: true }) }),
      /Cannot require client certificates on --testAddr/,
    );
  });
});

Deno.test("startGrpcServer bounds each connection", async (t) => {
  await t.step("a message over maxReceiveMessageBytes ends its call with RESOURCE_EXHAUSTED", async () => {
    const { server } = await start({ limits: { maxReceiveMessageBytes: 1024 } });
    const client = new EchoTestClient(server.address);
    try {
      assert.equal(
        await statusOf(client.unary("Echo", new Uint8Array(2048))),
        grpc.status.RESOURCE_EXHAUSTED,
      );
      assert.deepEqual(
        await client.unary("Echo", HELLO),
        HELLO,
        "the connection still serves small messages",
      );
    } finally {
      client.close();
      await server.close();
    }
  });

  await t.step("no more than maxConcurrentStreams streams of one connection run at once", async () => {
    const { server, holds } = await start({ limits: { maxConcurrentStreams: 2 } });
    const client = new EchoTestClient(server.address);
    try {
      const first = client.hold();
      client.hold();
      await waitUntil(() => holds.open === 2, "two streams open");
      const third = client.hold();
      const thirdOpened = holds.opened.promise;
      first.end();
      await thirdOpened;
      third.end();
      assert.equal(holds.peak, 2);
    } finally {
      client.close();
      await server.close();
    }
  });

  await t.step("out-of-range limits stop startup naming the limit", async () => {
    await assert.rejects(start({ limits: { maxConcurrentStreams: 0 } }), /maxConcurrentStreams "0"/);
    await assert.rejects(start({ limits: { maxReceiveMessageBytes: -1 } }), /maxReceiveMessageBytes "-1"/);
  });
});

Deno.test("close lets open streams finish within the grace period, then cuts them", async (t) => {
  await t.step("without open streams it resolves at once", async () => {
    const { server } = await start();
    const client = new EchoTestClient(server.address);
    await client.unary("Echo", HELLO);
    client.close();
    await server.close(60_000);
  });

  await t.step("a stream still open after the grace period is cut", async () => {
    const { server, holds } = await start();
    const client = new EchoTestClient(server.address);
    const held = client.hold();
    const status = new Promise<number>((resolve) =>
      held.on("status", (s: grpc.StatusObject) => resolve(s.code))
    );
    await waitUntil(() => holds.open === 1, "the stream open");
    await server.close(50);
    assert.notEqual(await status, grpc.status.OK);
    assert.equal(server.close(), server.close(), "closing again returns the same promise");
    client.close();
  });
});

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

Deno.test("a peer that breaks the protocol loses its own connection only", async (t) => {
  const { server, holds } = await start();
  const client = new EchoTestClient(server.address);
  try {
    const held = client.hold();
    await waitUntil(() => holds.open === 1, "a stream of a well-behaved peer open");
    const echoed = new Promise<Uint8Array>((resolve) => held.once("data", (b: Uint8Array) => resolve(b)));

    await t.step("bytes that are not HTTP/2 at all", async () => {
      await sendRaw(server.address, new TextEncoder().encode("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    });
    await t.step("a DATA frame on stream 0 (a connection error)", async () => {
      const data = Uint8Array.from([0, 0, 4, 0x0, 0, 0, 0, 0, 0, 1, 2, 3, 4]);
      await sendRaw(server.address, Uint8Array.from([...PREFACE, 0, 0, 0, 0x4, 0, 0, 0, 0, 0, ...data]));
    });
    await t.step("a frame longer than the peer may send", async () => {
      const header = Uint8Array.from([0xff, 0xff, 0xff, 0x0, 0, 0, 0, 0, 1]);
      await sendRaw(server.address, Uint8Array.from([...PREFACE, 0, 0, 0, 0x4, 0, 0, 0, 0, 0, ...header]));
    });

    await t.step("the other peer's stream and new calls are still served", async () => {
      held.write(Buffer.from(HELLO));
      assert.deepEqual(new Uint8Array(await echoed), HELLO);
      assert.equal(holds.open, 1);
      const fresh = new EchoTestClient(server.address);
      try {
        assert.deepEqual(await fresh.unary("Echo", HELLO), HELLO);
      } finally {
        fresh.close();
      }
    });
    held.end();
  } finally {
    client.close();
    await server.close();
  }
});
