import "reflect-metadata";
import assert from "node:assert/strict";
import * as grpc from "@grpc/grpc-js";
import { GrpcListenError } from "./grpc_server.ts";
import { EchoTestClient, startEchoServer } from "./_test_echo_service.ts";
import { waitFor } from "../testing/wait_for.ts";
import { serverTls, testPki, tlsClient } from "./_test_pki.ts";

const HELLO = new TextEncoder().encode("hello");

async function statusOf(call: Promise<unknown>): Promise<number> {
  try {
    await call;
    return grpc.status.OK;
  } catch (error) {
    return (error as grpc.ServiceError).code;
  }
}

Deno.test("startGrpcServer serves its services over plaintext TCP", async () => {
  const { server } = await startEchoServer();
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

Deno.test("startGrpcServer tells onSessionClosed of each HTTP/2 session that closes, once", async () => {
  let closed = 0;
  const { server } = await startEchoServer({ onSessionClosed: () => closed++ });
  try {
    for (let i = 1; i <= 3; i++) {
      const client = new EchoTestClient(server.address);
      assert.deepEqual(await client.unary("Echo", HELLO), HELLO);
      assert.equal(closed, i - 1, "an open session is not counted");
      client.close();
      await waitFor(() => closed === i, `session ${i} closed`);
    }
  } finally {
    await server.close();
  }
  assert.equal(closed, 3);
});

/** The servers grpc-js's process-wide channelz registry lists. */
function channelzServers(): Promise<unknown[]> {
  const { GetServers } = grpc.getChannelzHandlers();
  return new Promise((resolve, reject) => {
    GetServers(
      { request: { start_server_id: "0", max_results: "0" } } as Parameters<typeof GetServers>[0],
      (error, value) => error ? reject(error) : resolve(value?.server ?? []),
    );
  });
}

Deno.test("startGrpcServer keeps no channelz record of itself or its connections", async () => {
  const { server } = await startEchoServer();
  const client = new EchoTestClient(server.address);
  try {
    assert.deepEqual(await client.unary("Echo", HELLO), HELLO);
    assert.deepEqual(await channelzServers(), []);
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
  const { server } = await startEchoServer({ listen: { unix: path, flag: "--socket" } });
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
    await assert.rejects(startEchoServer({ listen: { unix: path, flag: "--socket" } }), (error: Error) => {
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
  const { server } = await startEchoServer();
  try {
    await assert.rejects(
      startEchoServer({ listen: { tcp: server.address, flag: "--testAddr" } }),
      (error: Error) => {
        assert.ok(error instanceof GrpcListenError);
        assert.match(error.message, new RegExp(`Cannot serve Echo on "${server.address}" \\(--testAddr\\)`));
        return true;
      },
    );
    await assert.rejects(
      startEchoServer({ listen: { tcp: "nonsense", flag: "--testAddr" } }),
      /Invalid --testAddr/,
    );
  } finally {
    await server.close();
  }
});

Deno.test("startGrpcServer serves TLS", async (t) => {
  const pki = await testPki();

  await t.step(
    "without client certificates: a TLS client is served and has no peer certificate",
    async () => {
      const { server } = await startEchoServer({ tls: serverTls(pki) });
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
    const { server } = await startEchoServer({ tls: serverTls(pki) });
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
      const { server } = await startEchoServer({ tls: serverTls(pki, { caPem: pki.caPem }) });
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
    const { server } = await startEchoServer({ tls: serverTls(pki, { caPem: pki.caPem }) });
    const stranger = tlsClient(server, pki, other.client);
    try {
      assert.equal((await stranger.unary("Peer", HELLO)).length, 0);
    } finally {
      stranger.close();
      await server.close();
    }
  });

  await t.step("required client certificates: a client without one is refused", async () => {
    const { server } = await startEchoServer({
      tls: serverTls(pki, { caPem: pki.caPem, requireClientCert: true }),
    });
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
      startEchoServer({ tls: serverTls(pki, { requireClientCert: true }) }),
      /Cannot require client certificates on --testAddr/,
    );
  });
});

Deno.test("startGrpcServer bounds each connection", async (t) => {
  await t.step("a message over maxReceiveMessageBytes ends its call with RESOURCE_EXHAUSTED", async () => {
    const { server } = await startEchoServer({ limits: { maxReceiveMessageBytes: 1024 } });
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
    const { server, holds } = await startEchoServer({ limits: { maxConcurrentStreams: 2 } });
    const client = new EchoTestClient(server.address);
    try {
      const first = client.hold();
      client.hold();
      await waitFor(() => holds.open === 2, "two streams open");
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
    await assert.rejects(
      startEchoServer({ limits: { maxConcurrentStreams: 0 } }),
      /maxConcurrentStreams "0"/,
    );
    await assert.rejects(
      startEchoServer({ limits: { maxReceiveMessageBytes: -1 } }),
      /maxReceiveMessageBytes "-1"/,
    );
  });
});

Deno.test("close lets open streams finish within the grace period, then cuts them", async (t) => {
  await t.step("without open streams it resolves at once", async () => {
    const { server } = await startEchoServer();
    const client = new EchoTestClient(server.address);
    await client.unary("Echo", HELLO);
    client.close();
    await server.close(60_000);
  });

  await t.step("a stream still open after the grace period is cut", async () => {
    const { server, holds } = await startEchoServer();
    const client = new EchoTestClient(server.address);
    const held = client.hold();
    const status = new Promise<number>((resolve) =>
      held.on("status", (s: grpc.StatusObject) => resolve(s.code))
    );
    await waitFor(() => holds.open === 1, "the stream open");
    await server.close(50);
    assert.notEqual(await status, grpc.status.OK);
    assert.equal(server.close(), server.close(), "closing again returns the same promise");
    client.close();
  });
});
