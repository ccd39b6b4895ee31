import assert from "node:assert/strict";
import { selfSignedServingCert } from "@mesh/shared/pki/serving_certificate";
import type { HttpGetProbe, TcpSocketProbe } from "./app_probe_config.ts";
import { runAppProbe } from "./app_probers.ts";

/** What the application saw of one probe request. */
interface Seen {
  readonly path: string;
  readonly headers: Headers;
}

/** A loopback application answering every request with `answer`, recording what it saw. */
function application(
  answer: () => Response | Promise<Response>,
  tls?: { cert: string; key: string },
): { port: number; seen: Seen[]; server: Deno.HttpServer<Deno.NetAddr> } {
  const seen: Seen[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {}, ...tls }, (request) => {
    const url = new URL(request.url);
    seen.push({ path: url.pathname + url.search, headers: request.headers });
    return answer();
  });
  return { port: server.addr.port, seen, server };
}

/** A loopback port nothing listens on. */
function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  return port;
}

const httpProbe = (port: number, more: Partial<HttpGetProbe> = {}): HttpGetProbe => ({
  kind: "httpGet",
  scheme: "HTTP",
  host: "127.0.0.1",
  port,
  path: "/healthz",
  headers: [],
  timeoutMs: 1000,
  ...more,
});

Deno.test("An httpGet probe answers with the application's status code", async (t) => {
  let status = 200;
  const app = application(() =>
    new Response(status === 302 ? null : "body", {
      status,
      headers: status === 302 ? { location: "/elsewhere" } : {},
    })
  );
  try {
    await t.step(
      "200 when the application says 200, with the path, query and headers configured",
      async () => {
        const outcome = await runAppProbe(httpProbe(app.port, {
          path: "/healthz?full=1",
          headers: [["X-Probe", "live"], ["Host", "web.local"]],
        }));
        assert.deepEqual(outcome, { status: 200 });
        const request = app.seen.at(-1)!;
        assert.equal(request.path, "/healthz?full=1");
        assert.equal(request.headers.get("x-probe"), "live");
        assert.equal(request.headers.get("host"), "web.local");
      },
    );

    await t.step("the application's failure status is passed through as it is", async () => {
      status = 503;
      assert.deepEqual(await runAppProbe(httpProbe(app.port)), { status: 503 });
    });

    await t.step("a redirect is reported, not followed, as the kubelet counts it", async () => {
      status = 302;
      const before = app.seen.length;
      assert.deepEqual(await runAppProbe(httpProbe(app.port)), { status: 302 });
      assert.equal(app.seen.length, before + 1, "only the probed path was requested");
    });
  } finally {
    await app.server.shutdown();
  }
});

Deno.test("An HTTPS httpGet probe does not verify the application's certificate, as the kubelet does not", async () => {
  const cert = await selfSignedServingCert(["web.example"]);
  const app = application(() => new Response("ok"), { cert: cert.certPem, key: cert.keyPem });
  try {
    assert.deepEqual(await runAppProbe(httpProbe(app.port, { scheme: "HTTPS" })), { status: 200 });
    assert.equal(app.seen.length, 1);
  } finally {
    await app.server.shutdown();
  }
});

Deno.test("An httpGet probe fails with 500 saying why when the application does not answer", async (t) => {
  await t.step("nothing listens: the error names the probed URL", async () => {
    const port = closedPort();
    const outcome = await runAppProbe(httpProbe(port));
    assert.equal(outcome.status, 500);
    assert.match(
      outcome.error ?? "",
      new RegExp(`^HTTP probe of http://127\\.0\\.0\\.1:${port}/healthz failed: `),
    );
  });

  await t.step("the application is slower than the timeout", async () => {
    const release = Promise.withResolvers<void>();
    const app = application(async () => {
      await release.promise;
      return new Response("late");
    });
    try {
      const outcome = await runAppProbe(httpProbe(app.port, { timeoutMs: 100 }));
      assert.equal(outcome.status, 500);
      assert.match(outcome.error ?? "", /failed: no answer within 100 ms$/);
    } finally {
      release.resolve();
      await app.server.shutdown();
    }
  });
});

Deno.test("A tcpSocket probe answers 200 when the application accepts a connection, else 500", async (t) => {
  const tcpProbe = (port: number): TcpSocketProbe => ({
    kind: "tcpSocket",
    host: "127.0.0.1",
    port,
    timeoutMs: 1000,
  });

  await t.step("a listening port: 200, and the connection is closed again", async () => {
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    try {
      const accepted = listener.accept();
      assert.deepEqual(await runAppProbe(tcpProbe(listener.addr.port)), { status: 200 });
      const conn = await accepted;
      const read = await conn.read(new Uint8Array(1));
      assert.equal(read, null, "the probe closed its connection");
      conn.close();
    } finally {
      listener.close();
    }
  });

  await t.step("a closed port: 500 naming the port", async () => {
    const port = closedPort();
    const outcome = await runAppProbe(tcpProbe(port));
    assert.equal(outcome.status, 500);
    assert.match(outcome.error ?? "", new RegExp(`^TCP probe of port ${port} failed: `));
  });
});
