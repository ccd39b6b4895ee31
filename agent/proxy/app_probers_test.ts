import assert from "node:assert/strict";
import { isAppHealthPath, parseAppProbers, runProbe } from "./app_probers.ts";

Deno.test("parseAppProbers reads HTTP and TCP probes by path", () => {
  const probes = parseAppProbers(JSON.stringify({
    "/app-health/web/livez": {
      httpGet: { path: "/healthz?full=1", port: 8080, httpHeaders: [{ name: "x-probe", value: "1" }] },
      timeoutSeconds: 3,
    },
    "/app-health/db/readyz": { tcpSocket: { port: "5432" } },
  }));
  assert.deepEqual(probes.get("/app-health/web/livez"), {
    kind: "http",
    url: "http://127.0.0.1:8080/healthz?full=1",
    headers: { "x-probe": "1" },
    timeoutMs: 3000,
  });
  assert.deepEqual(probes.get("/app-health/db/readyz"), {
    kind: "tcp",
    host: "127.0.0.1",
    port: 5432,
    timeoutMs: 1000,
  });
  assert.equal(parseAppProbers("").size, 0);
  assert.ok(isAppHealthPath("/app-health/x/livez"));
});

Deno.test("parseAppProbers rejects bad probes, naming the variable, the path or field and what is expected", () => {
  for (
    const [value, message] of [
      ["{", /MESH_ORCH_APP_PROBERS: not JSON/],
      ['{"/healthz": {"tcpSocket": {"port": 1}}}', /"\/healthz": expected a path \/app-health/],
      ['{"/app-health/a/livez": {"httpGet": {"port": "http"}}}', /httpGet\.port: expected a port number/],
      ['{"/app-health/a/livez": {"exec": {}}}', /expected a probe with httpGet or tcpSocket/],
      [
        '{"/app-health/a/livez": {"tcpSocket": {"port": 1}, "timeoutSeconds": 0}}',
        /timeoutSeconds: expected seconds/,
      ],
      [
        '{"/app-health/a/livez": {"httpGet": {"port": 1, "scheme": "FTP"}}}',
        /scheme: expected HTTP or HTTPS/,
      ],
    ] as const
  ) {
    assert.throws(
      () => parseAppProbers(value),
      (e: Error) => e instanceof RangeError && message.test(e.message),
      value,
    );
  }
});

Deno.test("runProbe passes on the application's HTTP status, and checks TCP ports by connecting", async () => {
  let seenHeader = "";
  const app = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    seenHeader = request.headers.get("x-probe") ?? "";
    return new Response("no", { status: new URL(request.url).pathname === "/ok" ? 200 : 503 });
  });
  const port = app.addr.port;
  try {
    const probes = parseAppProbers(JSON.stringify({
      "/app-health/web/livez": {
        httpGet: { path: "/ok", port, httpHeaders: [{ name: "x-probe", value: "yes" }] },
      },
      "/app-health/web/readyz": { httpGet: { path: "/sick", port } },
      "/app-health/web/startupz": { tcpSocket: { port } },
    }));
    assert.equal((await runProbe(probes.get("/app-health/web/livez")!)).status, 200);
    assert.equal(seenHeader, "yes");
    assert.equal((await runProbe(probes.get("/app-health/web/readyz")!)).status, 503);
    assert.equal((await runProbe(probes.get("/app-health/web/startupz")!)).status, 200);
  } finally {
    await app.shutdown();
  }
  const closed = parseAppProbers(JSON.stringify({ "/app-health/web/livez": { tcpSocket: { port } } }));
  const result = await runProbe(closed.get("/app-health/web/livez")!);
  assert.equal(result.status, 500, "nothing listens any more");
});
