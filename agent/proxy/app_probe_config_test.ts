import assert from "node:assert/strict";
import { appProbeFor, DEFAULT_PROBE_TIMEOUT_MS, NO_APP_PROBES, parseAppProbes } from "./app_probe_config.ts";

const probers = (value: unknown) => JSON.stringify(value);

Deno.test("parseAppProbes reads MESH_ORCH_APP_PROBERS into frozen, typed probes", async (t) => {
  await t.step("an unset variable means no probes", () => {
    assert.equal(parseAppProbes(""), NO_APP_PROBES);
    assert.equal(appProbeFor(parseAppProbes(""), "/app-health/web/livez"), undefined);
  });

  await t.step("an httpGet probe keeps its path, port, scheme, headers and timeout", () => {
    const probes = parseAppProbes(probers({
      "/app-health/web/livez": {
        httpGet: {
          path: "/healthz?full=1",
          port: 8080,
          scheme: "HTTPS",
          httpHeaders: [{ name: "X-Probe", value: "live" }, { name: "Host", value: "web.local" }],
        },
        timeoutSeconds: 3,
      },
    }));
    assert.deepEqual(appProbeFor(probes, "/app-health/web/livez"), {
      kind: "httpGet",
      scheme: "HTTPS",
      host: "127.0.0.1",
      port: 8080,
      path: "/healthz?full=1",
      headers: [["X-Probe", "live"], ["Host", "web.local"]],
      timeoutMs: 3000,
    });
    assert.ok(Object.isFrozen(probes) && Object.isFrozen(probes["/app-health/web/livez"]));
  });

  await t.step(
    "defaults: path /, scheme HTTP, host loopback, timeout 1 s; a relative path gets its /",
    () => {
      const probes = parseAppProbes(probers({
        "/app-health/web/readyz": { httpGet: { port: 8080 } },
        "/app-health/web/startupz": { httpGet: { port: 8080, path: "started" } },
      }));
      assert.deepEqual(appProbeFor(probes, "/app-health/web/readyz"), {
        kind: "httpGet",
        scheme: "HTTP",
        host: "127.0.0.1",
        port: 8080,
        path: "/",
        headers: [],
        timeoutMs: DEFAULT_PROBE_TIMEOUT_MS,
      });
      assert.equal(
        appProbeFor(probes, "/app-health/web/startupz")?.kind === "httpGet" &&
          (appProbeFor(probes, "/app-health/web/startupz") as { path: string }).path,
        "/started",
      );
    },
  );

  await t.step("a tcpSocket probe keeps its port; a loopback host is kept, localhost is 127.0.0.1", () => {
    const probes = parseAppProbes(probers({
      "/app-health/db/livez": { tcpSocket: { port: 9000 }, timeoutSeconds: 2 },
      "/app-health/db/readyz": { tcpSocket: { port: 9000, host: "::1" } },
      "/app-health/db/startupz": { tcpSocket: { port: 9000, host: "localhost" } },
    }));
    assert.deepEqual(appProbeFor(probes, "/app-health/db/livez"), {
      kind: "tcpSocket",
      host: "127.0.0.1",
      port: 9000,
      timeoutMs: 2000,
    });
    assert.equal(appProbeFor(probes, "/app-health/db/readyz")?.host, "::1");
    assert.equal(appProbeFor(probes, "/app-health/db/startupz")?.host, "127.0.0.1");
  });

  await t.step("lookups see configured paths only, never inherited properties", () => {
    const probes = parseAppProbes(probers({ "/app-health/web/livez": { tcpSocket: { port: 1 } } }));
    assert.equal(appProbeFor(probes, "constructor"), undefined);
    assert.equal(appProbeFor(probes, "/app-health/web/readyz"), undefined);
  });
});

Deno.test("parseAppProbes stops startup on a bad probe, naming the variable, the field and what is expected", async (t) => {
  const cases: Array<[string, string, RegExp]> = [
    ["text that is not JSON", "{not json", /^MESH_ORCH_APP_PROBERS is not valid JSON .*expected an object/],
    ["a list instead of an object", "[]", /^MESH_ORCH_APP_PROBERS is invalid: expected an object .*got \[\]/],
    [
      "a path outside /app-health/<container>/<kind>",
      probers({ "/healthz": { tcpSocket: { port: 1 } } }),
      /MESH_ORCH_APP_PROBERS\["\/healthz"\] is not a probe path: expected \/app-health\/<container>\/<livez\|readyz\|startupz>/,
    ],
    [
      "an unknown probe kind",
      probers({ "/app-health/web/livez": { tcpSocket: { port: 1 }, exec: { command: ["true"] } } }),
      /\["\/app-health\/web\/livez"\] has an unknown field "exec": expected only httpGet, tcpSocket, timeoutSeconds/,
    ],
    [
      "a gRPC probe",
      probers({ "/app-health/web/livez": { grpc: { port: 9090 } } }),
      /\["\/app-health\/web\/livez"\]\.grpc is not supported: the agent runs httpGet and tcpSocket probes only/,
    ],
    [
      "no probe at all",
      probers({ "/app-health/web/livez": { timeoutSeconds: 1 } }),
      /has no probe: expected exactly one of httpGet or tcpSocket/,
    ],
    [
      "two probes at once",
      probers({ "/app-health/web/livez": { httpGet: { port: 1 }, tcpSocket: { port: 1 } } }),
      /has two probes: expected exactly one of httpGet or tcpSocket/,
    ],
    [
      "a named port",
      probers({ "/app-health/web/livez": { httpGet: { port: "http" } } }),
      /\.httpGet\.port is invalid: expected an integer port from 1 to 65535 \(a named port must be resolved .*got "http"/,
    ],
    [
      "a port out of range",
      probers({ "/app-health/web/livez": { tcpSocket: { port: 70000 } } }),
      /\.tcpSocket\.port is invalid: expected an integer port from 1 to 65535, got 70000/,
    ],
    [
      "a scheme other than HTTP or HTTPS",
      probers({ "/app-health/web/livez": { httpGet: { port: 1, scheme: "ftp" } } }),
      /\.httpGet\.scheme is invalid: expected "HTTP" or "HTTPS", got "ftp"/,
    ],
    [
      "a host outside the pod",
      probers({ "/app-health/web/livez": { httpGet: { port: 1, host: "10.0.0.1" } } }),
      /\.httpGet\.host is invalid: expected a loopback address .*got "10\.0\.0\.1"/,
    ],
    [
      "a zero timeout",
      probers({ "/app-health/web/livez": { tcpSocket: { port: 1 }, timeoutSeconds: 0 } }),
      /\.timeoutSeconds is invalid: expected an integer number of seconds from 1 to 3600, got 0/,
    ],
    [
      "a path with a space",
      probers({ "/app-health/web/livez": { httpGet: { port: 1, path: "/a b" } } }),
      /\.httpGet\.path is invalid: expected a URL path of printable ASCII/,
    ],
    [
      "a header name that is not a token",
      probers({
        "/app-health/web/livez": { httpGet: { port: 1, httpHeaders: [{ name: "a b", value: "" }] } },
      }),
      /\.httpGet\.httpHeaders\[0\]\.name is invalid: expected an HTTP header name, got "a b"/,
    ],
    [
      "a header value with a line break",
      probers({
        "/app-health/web/livez": { httpGet: { port: 1, httpHeaders: [{ name: "a", value: "x\r\ny: z" }] } },
      }),
      /\.httpGet\.httpHeaders\[0\]\.value is invalid: expected a header value without control characters/,
    ],
    [
      "a misspelt field",
      probers({ "/app-health/web/livez": { tcpSocket: { port: 1 }, timeoutseconds: 5 } }),
      /has an unknown field "timeoutseconds"/,
    ],
  ];
  for (const [what, text, message] of cases) {
    await t.step(what, () => {
      assert.throws(() => parseAppProbes(text), { message });
    });
  }
});
