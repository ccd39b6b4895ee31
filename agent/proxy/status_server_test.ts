import assert from "node:assert/strict";
import http2 from "node:http2";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { waitFor } from "@mesh/shared/testing/wait_for";
import { NO_APP_PROBES, parseAppProbes } from "./app_probe_config.ts";
import { STATS_CONTENT_TYPE } from "./merged_stats.ts";
import { MAX_STATS_RESPONSES, startStatusServer, type StatusDeps, statusRouter } from "./status_server.ts";

const ENVOY_STATS = "# TYPE envoy_server_live gauge\nenvoy_server_live 1\n";
const APP_METRICS = "# TYPE app_requests_total counter\napp_requests_total 7\n";

/** A loopback HTTP server answering by path; `routes` may change while it runs. */
function loopbackServer(routes: Record<string, () => Response>) {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    const route = routes[new URL(request.url).pathname];
    return route ? route() : new Response("not found", { status: 404 });
  });
  return { port: server.addr.port, routes, close: () => server.shutdown() };
}

/** A loopback port nothing listens on. */
function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  return port;
}

/** The proxy's admin port (ready, with stats) and an application with a health and a metrics path. */
async function withPod(
  body: (pod: {
    admin: ReturnType<typeof loopbackServer>;
    app: ReturnType<typeof loopbackServer>;
    deps: (more?: Partial<StatusDeps>) => StatusDeps;
  }) => Promise<void>,
): Promise<void> {
  const admin = loopbackServer({
    "/ready": () => new Response("LIVE\n"),
    "/stats/prometheus": () => new Response(ENVOY_STATS),
  });
  const app = loopbackServer({
    "/healthz": () => new Response("fine"),
    "/metrics": () => new Response(APP_METRICS),
  });
  const deps = (more: Partial<StatusDeps> = {}): StatusDeps => ({
    adminPort: admin.port,
    quit: () => {},
    probes: parseAppProbes(JSON.stringify({
      "/app-health/web/livez": { httpGet: { path: "/healthz", port: app.port } },
      "/app-health/web/readyz": { tcpSocket: { port: app.port } },
    })),
    appMetrics: { port: app.port, path: "/metrics" },
    metrics: new Metrics("agent", { version: "1.0.0", tag: "1.0.0" }),
    log: new RecordingLogger(),
    ...more,
  });
  try {
    await body({ admin, app, deps });
  } finally {
    await Promise.all([admin.close(), app.close()]);
  }
}

const get = (deps: StatusDeps, path: string) =>
  statusRouter(deps).handle(new Request(`http://127.0.0.1:15020${path}`));

Deno.test("startup_duration_seconds is the agent's age at its first ready probe", async () => {
  await withPod(async ({ admin, deps }) => {
    let uptime = 1.5;
    const status = deps({ uptimeSeconds: () => uptime });
    const router = statusRouter(status);
    const ready = async () =>
      (await router.handle(new Request("http://127.0.0.1:15020/healthz/ready"))).status;
    const recorded = async () =>
      (await status.metrics.gauge("startup_duration_seconds").get()).values[0]?.value;
    admin.routes["/ready"] = () => new Response("PRE_INITIALIZING\n", { status: 503 });
    assert.equal(await ready(), 503);
    assert.equal(await recorded(), 0, "not ready yet: not recorded");
    admin.routes["/ready"] = () => new Response("LIVE\n");
    uptime = 4.25;
    assert.equal(await ready(), 200);
    assert.equal(await recorded(), 4.25);
    uptime = 9;
    assert.equal(await ready(), 200);
    assert.equal(await recorded(), 4.25, "later ready probes leave it");
  });
});

Deno.test("/app-health/<container>/<kind> answers with the configured application probe", async (t) => {
  await withPod(async ({ app, deps }) => {
    const status = deps();

    await t.step("an httpGet probe answers with the application's status", async () => {
      assert.equal((await get(status, "/app-health/web/livez")).status, 200);
      app.routes["/healthz"] = () => new Response("sick", { status: 503 });
      const response = await get(status, "/app-health/web/livez");
      assert.equal(response.status, 503);
      assert.equal(await response.text(), "", "the application's body is not relayed");
    });

    await t.step("a tcpSocket probe answers 200 while the application accepts connections", async () => {
      assert.equal((await get(status, "/app-health/web/readyz")).status, 200);
    });

    await t.step("a probe that gets no answer is 500 saying why, and is logged once", async () => {
      const log = new RecordingLogger();
      const down = deps({
        probes: parseAppProbes(
          JSON.stringify({ "/app-health/web/livez": { tcpSocket: { port: closedPort() } } }),
        ),
        log,
      });
      const router = statusRouter(down);
      const response = await router.handle(new Request("http://127.0.0.1:15020/app-health/web/livez"));
      assert.equal(response.status, 500);
      assert.match(await response.text(), /^TCP probe of port \d+ failed: /);
      await (await router.handle(new Request("http://127.0.0.1:15020/app-health/web/livez"))).body?.cancel();
      assert.equal(log.matching("warn", "application probe /app-health/web/livez is failing").length, 1);
    });

    await t.step("a probe path with no probe configured is 404 naming the path", async () => {
      const response = await get(status, "/app-health/web/startupz");
      assert.equal(response.status, 404);
      assert.match(
        (await response.json()).error,
        /^No application probe is configured for \/app-health\/web\/startupz; MESH_ORCH_APP_PROBERS names/,
      );
    });

    await t.step("any other /app-health/ path is 404 without repeating what was asked", async () => {
      for (const path of ["/app-health/", "/app-health/%3Cscript%3E/livez", "/app-health/web/livez/extra"]) {
        const response = await get(status, path);
        assert.equal(response.status, 404, path);
        const { error } = await response.json();
        assert.equal(
          error,
          "Not an application probe path: expected /app-health/<container>/<livez|readyz|startupz>",
        );
      }
    });

    await t.step("with no probes configured every probe path is 404", async () => {
      const response = await get(deps({ probes: NO_APP_PROBES }), "/app-health/web/livez");
      assert.equal(response.status, 404);
      await response.body?.cancel();
    });
  });
});

Deno.test("/stats/prometheus serves the proxy's, the agent's and the application's metrics in one exposition", async (t) => {
  await withPod(async ({ admin, app, deps }) => {
    await t.step("all three, in that order, as Prometheus text 0.0.4", async () => {
      const response = await get(deps(), "/stats/prometheus");
      assert.equal(response.headers.get("content-type"), STATS_CONTENT_TYPE);
      const text = await response.text();
      assert.ok(text.startsWith(ENVOY_STATS), text);
      assert.ok(text.endsWith(APP_METRICS), text);
      assert.match(text, /^mesh_build\{component="proxy",tag="1\.0\.0"\} 1$/m, "the agent's own metrics");
      assert.match(text, /^scrapes_total 1$/m);
    });

    await t.step("without MESH_METRICS_ANNOTATIONS the application is not scraped", async () => {
      const { appMetrics: _, ...withoutAppMetrics } = deps();
      const text = await (await get(withoutAppMetrics, "/stats/prometheus")).text();
      assert.ok(text.startsWith(ENVOY_STATS));
      assert.doesNotMatch(text, /app_requests_total/);
    });

    await t.step(
      "a failing application is a comment line; the proxy's and agent's metrics are still served",
      async () => {
        app.routes["/metrics"] = () => new Response("boom", { status: 500 });
        const router = statusRouter(deps());
        const response = await router.handle(new Request("http://127.0.0.1:15020/stats/prometheus"));
        assert.equal(response.status, 200);
        const text = await response.text();
        assert.ok(text.startsWith(ENVOY_STATS));
        assert.match(
          text,
          /^# mesh-agent skipped the application metrics: http:\/\/127\.0\.0\.1:\d+\/metrics answered HTTP 500$/m,
        );
        assert.doesNotMatch(text, /boom/, "nothing of the failed answer is relayed");
        // The agent's registry is read alongside the others, so the failure is counted from the next scrape on.
        const next = await (await router.handle(new Request("http://127.0.0.1:15020/stats/prometheus")))
          .text();
        assert.match(next, /^scrape_failures_total\{type="application"\} 1$/m);
      },
    );

    await t.step("an unreachable proxy is skipped the same way", async () => {
      delete admin.routes["/stats/prometheus"];
      const text = await (await get(deps(), "/stats/prometheus")).text();
      assert.match(text, /^# mesh-agent skipped the envoy metrics: .*answered HTTP 404$/m);
      assert.match(text, /^mesh_build\{/m);
    });

    await t.step("a source larger than the cap is skipped", async () => {
      admin.routes["/stats/prometheus"] = () => new Response(ENVOY_STATS.repeat(100));
      const text = await (await get(deps({ statsLimits: { maxBytes: 1000 } }), "/stats/prometheus")).text();
      assert.match(
        text,
        /^# mesh-agent skipped the envoy metrics: .*sent more than the 1000 bytes allowed$/m,
      );
    });
  });
});

Deno.test("/healthz/ready still follows the proxy's admin /ready", async () => {
  await withPod(async ({ admin, deps }) => {
    assert.equal(await (await get(deps(), "/healthz/ready")).text(), "ready\n");
    admin.routes["/ready"] = () => new Response("PRE_INITIALIZING\n", { status: 503 });
    const response = await get(deps(), "/healthz/ready");
    assert.equal(response.status, 503);
    assert.match(await response.text(), /^not ready: proxy admin \/ready answered 503 PRE_INITIALIZING/);
  });
});

Deno.test("startStatusServer serves the routes on its port", async () => {
  await withPod(async ({ deps }) => {
    const server = await startStatusServer(0, deps());
    try {
      const probe = await fetch(`${server.url}/app-health/web/livez`);
      await probe.body?.cancel();
      assert.equal(probe.status, 200);
      const stats = await fetch(`${server.url}/stats/prometheus`);
      assert.match(await stats.text(), /^app_requests_total 7$/m);
    } finally {
      await server.shutdown();
    }
  });
});

Deno.test("Scrapers asking at once share one read of the proxy's stats, and each gets all of it", async () => {
  // 2 MiB of stats: several of the status server's 64 KiB pieces, each response sending views of one array.
  const big = ENVOY_STATS + 'envoy_cluster_upstream_rq_total{cluster_name="a"} 1\n'.repeat(40_000);
  const held = Promise.withResolvers<void>();
  let reads = 0;
  await withPod(async ({ admin, deps }) => {
    admin.routes["/stats/prometheus"] = () => {
      reads++;
      return new Response(
        new ReadableStream({
          async start(controller) {
            await held.promise;
            controller.enqueue(new TextEncoder().encode(big));
            controller.close();
          },
        }),
      );
    };
    const statusDeps = deps({ appMetrics: undefined });
    const server = await startStatusServer(0, statusDeps);
    try {
      const scrapes = Array.from(
        { length: MAX_STATS_RESPONSES },
        () => fetch(`${server.url}/stats/prometheus`),
      );
      // Every scraper has asked once the scrapes are counted; only then does the proxy answer.
      await waitFor(
        async () =>
          new RegExp(`^scrapes_total ${MAX_STATS_RESPONSES}$`, "m").test(await statusDeps.metrics.render()),
        "every scrape to arrive",
      );
      held.resolve();
      for (const response of await Promise.all(scrapes)) {
        const text = await response.text();
        assert.ok(text.startsWith(big), `a scrape of ${text.length} characters`);
        assert.match(text.slice(big.length), /^# HELP /, "the agent's own metrics follow");
      }
      assert.equal(reads, 1);
    } finally {
      await server.shutdown();
    }
  });
});

Deno.test("Past four expositions being sent, a scrape is told to retry, counted and logged once", async () => {
  await withPod(async ({ deps }) => {
    const statusDeps = deps({ appMetrics: undefined });
    const router = statusRouter(statusDeps);
    const scrape = () => router.handle(new Request("http://127.0.0.1:15020/stats/prometheus"));
    // Responses whose clients have not read them yet: each keeps its exposition until read or cancelled.
    const unread = await Promise.all(Array.from({ length: MAX_STATS_RESPONSES }, scrape));
    assert.deepEqual(unread.map((r) => r.status), Array(MAX_STATS_RESPONSES).fill(200));
    for (let i = 0; i < 3; i++) {
      const refused = await scrape();
      assert.equal(refused.status, 503);
      assert.equal(refused.headers.get("retry-after"), "1");
      assert.equal(await refused.text(), "4 expositions are being sent; retry\n");
    }
    assert.match(await statusDeps.metrics.render(), /^scrape_failures_total\{type="busy"\} 3$/m);
    const log = statusDeps.log as RecordingLogger;
    assert.equal(log.matching("warn", "metrics scrape busy is failing").length, 1);

    await unread[0].body!.cancel();
    assert.match(
      await (await scrape()).text(),
      /^envoy_server_live 1$/m,
      "a cancelled response gives its place",
    );
    assert.match(await unread[1].text(), /^envoy_server_live 1$/m);
    const next = await scrape();
    assert.equal(next.status, 200, "so does one read to its end");
    for (const response of [next, ...unread.slice(2)]) await response.body?.cancel();
  });
});

Deno.test("startStatusServer counts what its request bounds refuse", async () => {
  await withPod(async ({ app, deps }) => {
    const release = Promise.withResolvers<void>();
    app.routes["/slow"] = (() => release.promise.then(() => new Response("fine"))) as unknown as () =>
      Response;
    const statusDeps = deps({
      probes: parseAppProbes(JSON.stringify({
        "/app-health/web/livez": { httpGet: { path: "/slow", port: app.port } },
      })),
    });
    const server = await startStatusServer(0, statusDeps);
    try {
      // One address may have 64 requests in progress; the 65th, on the same HTTP/2 connection, is refused.
      const session = http2.connect(server.url);
      const statuses: Promise<number>[] = [];
      try {
        for (let i = 0; i < 65; i++) {
          const stream = session.request({ ":path": "/app-health/web/livez" });
          statuses.push(
            new Promise((resolve) => stream.on("response", (h) => resolve(Number(h[":status"])))),
          );
          stream.resume();
        }
        assert.equal(await Promise.race(statuses), 429);
        release.resolve();
        assert.deepEqual((await Promise.all(statuses)).sort(), [...Array(64).fill(200), 429].sort());
      } finally {
        session.close();
      }
      assert.match(
        await statusDeps.metrics.render(),
        /^http_server_refused\{server="status",reason="peer_requests"\} 1$/m,
      );
    } finally {
      release.resolve();
      await server.shutdown();
    }
  });
});

/** This machine's first non-loopback IPv4 address, if it has one. */
function outsideAddress(): string | undefined {
  return Deno.networkInterfaces().find((i) => i.family === "IPv4" && !i.address.startsWith("127."))?.address;
}

/** Sends a raw HTTP/1.1 request (headers as written, Host included) and returns the status code. */
async function rawPost(hostname: string, port: number, path: string, host: string): Promise<number> {
  const conn = await Deno.connect({ hostname, port });
  try {
    await conn.write(new TextEncoder().encode(
      `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
    ));
    const buffer = new Uint8Array(512);
    const n = await conn.read(buffer);
    return Number(new TextDecoder().decode(buffer.subarray(0, n ?? 0)).split(" ")[1]);
  } finally {
    conn.close();
  }
}

Deno.test({
  name: "/quitquitquit obeys loopback callers only, judged by the TCP peer and not by a forged Host header",
  ignore: outsideAddress() === undefined,
  fn: async () => {
    await withPod(async ({ deps }) => {
      let quits = 0;
      const port = closedPort();
      const server = await startStatusServer(port, deps({ quit: () => quits++ }));
      try {
        assert.equal(await rawPost(outsideAddress()!, port, "/quitquitquit", "127.0.0.1"), 403);
        assert.equal(quits, 0);
        assert.equal(await rawPost("127.0.0.1", port, "/quitquitquit", "status.example"), 200);
        assert.equal(quits, 1);
      } finally {
        await server.shutdown();
      }
    });
  },
});
