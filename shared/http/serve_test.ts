import assert from "node:assert/strict";
import { silentLogger } from "../log/logger.ts";
import { Metrics } from "../metrics/metrics.ts";
import { RecordingLogger } from "../testing/recording_logger.ts";
import { waitFor } from "../testing/wait_for.ts";
import { isLoopbackAddress, loopbackOnly, peerAddress, relayedPeer, serveHttp } from "./serve.ts";
import { TrafficMeter } from "../process/traffic_meter.ts";

/** A non-loopback IPv4 address of this host, if it has one. */
function externalAddress(): string | undefined {
  return Deno.networkInterfaces().find((i) => i.family === "IPv4" && !i.address.startsWith("127."))?.address;
}

Deno.test("isLoopbackAddress knows IPv4, IPv6 and mapped loopback", () => {
  assert.deepEqual(
    ["127.0.0.1", "127.3.2.1", "::1", "[::1]", "::ffff:127.0.0.1", "10.0.0.1", "::ffff:10.0.0.1", "fd00::1"]
      .map(isLoopbackAddress),
    [true, true, true, true, true, false, false, false],
  );
});

Deno.test("loopbackOnly answers loopback callers and refuses others without the opt-in", async (t) => {
  const external = externalAddress();
  const secret = () => new Response("secret");
  const routes = (request: Request) => {
    const path = new URL(request.url).pathname;
    if (path === "/closed") return loopbackOnly(secret, false)(request);
    if (path === "/open") return loopbackOnly(secret, true)(request);
    return new Response(peerAddress(request)?.hostname ?? "unknown");
  };
  const server = await serveHttp("test", { hostname: "0.0.0.0", port: 0 }, routes, silentLogger);
  const port = server.address.port;
  try {
    await t.step("the peer address is known to handlers", async () => {
      assert.equal(await (await fetch(`http://127.0.0.1:${port}/peer`)).text(), "127.0.0.1");
    });
    await t.step("a loopback caller is served", async () => {
      const response = await fetch(`http://127.0.0.1:${port}/closed`);
      assert.equal(await response.text(), "secret");
    });
    await t.step({
      name: "another caller gets 403 naming DEBUG_REMOTE_ACCESS",
      ignore: external === undefined,
      fn: async () => {
        const response = await fetch(`http://${external}:${port}/closed`);
        assert.equal(response.status, 403);
        assert.match(await response.text(), /DEBUG_REMOTE_ACCESS=true/);
      },
    });
    await t.step({
      name: "with the opt-in another caller is served",
      ignore: external === undefined,
      fn: async () => {
        assert.equal(await (await fetch(`http://${external}:${port}/open`)).text(), "secret");
      },
    });
  } finally {
    await server.shutdown();
  }
});

Deno.test("A caller the guard cannot place is treated as remote, not as loopback", () => {
  const relayed: Deno.NetAddr = { transport: "tcp", hostname: "127.0.0.1", port: 40000 };
  const peer = relayedPeer(relayed, () => undefined);
  assert.equal(isLoopbackAddress(peer.hostname), false);
  const known: Deno.NetAddr = { transport: "tcp", hostname: "10.1.2.3", port: 5555 };
  assert.deepEqual(relayedPeer(relayed, (port) => port === 40000 ? known : undefined), known);
});

Deno.test("Requests past the listener's and the client's bounds are refused before their body is read", async (t) => {
  const metrics = new Metrics("discovery", { version: "0", tag: "test" });
  const log = new RecordingLogger();
  const release = Promise.withResolvers<void>();
  let held = 0;
  let bodiesRead = 0;
  const handler = async (request: Request) => {
    if (new URL(request.url).pathname === "/hold") {
      held++;
      await release.promise;
    }
    const body = await request.text();
    if (body) bodiesRead++;
    return new Response(`got ${body.length} bytes`);
  };
  const server = await serveHttp(
    "bounded",
    { hostname: "127.0.0.1", port: 0 },
    handler,
    log,
    undefined,
    undefined,
    {
      requests: { maxRequests: 4, maxRequestsPerPeer: 3, maxBodyBytes: 1000, maxBodyBytesPerPeer: 1000 },
      metrics,
    },
  );
  const refused = async (reason: string) =>
    (await metrics.counter("http_server_refused").get()).values
      .find((v) => v.labels.reason === reason && v.labels.server === "bounded")?.value ?? 0;
  const holding: Promise<Response>[] = [];
  try {
    holding.push(fetch(`${server.url}/hold`, { method: "POST", body: "x".repeat(800) }));
    holding.push(fetch(`${server.url}/hold`));
    await waitFor(() => held === 2, "two requests in progress");
    await t.step("a body that would pass the bytes in flight allowed: 503 with retry-after", async () => {
      const response = await fetch(`${server.url}/`, { method: "POST", body: "x".repeat(500) });
      assert.equal(response.status, 503);
      assert.equal(response.headers.get("retry-after"), "1");
      await response.body?.cancel();
      assert.equal(bodiesRead, 0);
      assert.equal(await refused("body_bytes"), 1);
    });
    holding.push(fetch(`${server.url}/hold`));
    await waitFor(() => held === 3, "three requests in progress");
    await t.step(
      "a client with three requests in progress gets 429 for a fourth, counted and logged once",
      async () => {
        for (let i = 0; i < 3; i++) {
          const response = await fetch(`${server.url}/`, { method: "POST", body: "abc" });
          assert.equal(response.status, 429);
          assert.ok(response.headers.has("retry-after"));
          await response.body?.cancel();
        }
        assert.equal(bodiesRead, 0);
        assert.equal(await refused("peer_requests"), 3);
        assert.equal(log.matching("warn", "request refused").length, 1);
      },
    );
    await t.step("once they end, the client is served again", async () => {
      release.resolve();
      const answers = await Promise.all(holding.map(async (response) => await (await response).text()));
      assert.deepEqual(answers, ["got 800 bytes", "got 0 bytes", "got 0 bytes"]);
      const response = await fetch(`${server.url}/`, { method: "POST", body: "abc" });
      assert.equal(await response.text(), "got 3 bytes");
    });
  } finally {
    release.resolve();
    await Promise.allSettled(holding);
    await server.shutdown();
  }
});

Deno.test("A listener tells its traffic meter the body bytes of the requests it served, not bodiless probes", async () => {
  const traffic = new TrafficMeter();
  const handler = async (request: Request) => new Response(`got ${(await request.text()).length} bytes`);
  const server = await serveHttp(
    "counted",
    { hostname: "127.0.0.1", port: 0 },
    handler,
    silentLogger,
    undefined,
    undefined,
    { traffic },
  );
  try {
    for (let i = 0; i < 5; i++) await (await fetch(`${server.url}/ready`)).text();
    assert.equal(traffic.total, 0);
    assert.equal(
      await (await fetch(server.url, { method: "POST", body: "x".repeat(5_000) })).text(),
      "got 5000 bytes",
    );
    const stream = new Blob(["y".repeat(3_000)]).stream();
    await (await fetch(server.url, { method: "POST", body: stream })).text();
    await waitFor(() => traffic.total === 8_000, "both bodies counted");
  } finally {
    await server.shutdown();
  }
});

Deno.test("Accepting resumes once file descriptors free up", async () => {
  const script = new URL("./testdata/serve_until_stdin_closes.ts", import.meta.url).pathname;
  const child = new Deno.Command("sh", {
    args: ["-c", `ulimit -n 64; exec "${Deno.execPath()}" run --allow-net "${script}"`],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const stderr: string[] = [];
  const errors = (async () => {
    for await (const text of child.stderr.pipeThrough(new TextDecoderStream())) stderr.push(text);
  })();
  const held: Deno.Conn[] = [];
  try {
    const port = Number((await lines.read()).value?.trim());
    assert.ok(port > 0, `the server printed its port: ${stderr.join("")}`);
    for (let i = 0; i < 80; i++) held.push(await Deno.connect({ hostname: "127.0.0.1", port }));
    await waitFor(
      () => stderr.join("").includes("cannot accept connections"),
      "the server to run out of descriptors",
    );
    for (const conn of held.splice(0)) conn.close();
    const response = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(10_000) });
    assert.equal(await response.text(), "ok");
  } finally {
    for (const conn of held) conn.close();
    child.stdin.close();
    await child.status;
    await lines.cancel();
    await errors;
  }
});
