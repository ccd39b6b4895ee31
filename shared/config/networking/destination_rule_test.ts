import assert from "node:assert/strict";
import { check } from "./_check.ts";
import { validateDestinationRule } from "./destination_rule.ts";

const dr = (spec: unknown) => check(validateDestinationRule, spec);

Deno.test("DestinationRule accepts valid policies and subsets", async (t) => {
  await t.step("subsets with labels and their own traffic policy", () => {
    const r = dr({
      host: "reviews.prod.svc.cluster.local",
      subsets: [
        { name: "v1", labels: { version: "v1", "app.kubernetes.io/name": "reviews" } },
        { name: "v2", labels: { version: "v2" }, trafficPolicy: { loadBalancer: { simple: "ROUND_ROBIN" } } },
      ],
      exportTo: ["*"],
    });
    assert.deepEqual(r.messages, []);
  });

  await t.step("connection pool, outlier detection, client TLS and port-level settings", () => {
    const r = dr({
      host: "*.example.com",
      trafficPolicy: {
        connectionPool: {
          tcp: {
            maxConnections: 100,
            connectTimeout: "30ms",
            tcpKeepalive: { time: "7200s", interval: "75s" },
          },
          http: {
            http1MaxPendingRequests: 10,
            maxRequestsPerConnection: 1,
            idleTimeout: "1h",
            h2UpgradePolicy: "UPGRADE",
          },
        },
        outlierDetection: {
          consecutive5xxErrors: 7,
          interval: "5m",
          baseEjectionTime: "15m",
          maxEjectionPercent: 100,
        },
        tls: {
          mode: "MUTUAL",
          clientCertificate: "/etc/certs/cert.pem",
          privateKey: "/etc/certs/key.pem",
          sni: "x.example.com",
        },
        portLevelSettings: [{ port: { number: 80 }, loadBalancer: { simple: "LEAST_CONN" } }],
      },
    });
    assert.deepEqual(r.messages, []);
  });

  await t.step("consistent hashing by cookie and locality failover", () => {
    const r = dr({
      host: "cart",
      trafficPolicy: {
        loadBalancer: {
          consistentHash: { httpCookie: { name: "user", ttl: "0s" }, minimumRingSize: 1024 },
          localityLbSetting: { enabled: true, failover: [{ from: "us-east", to: "us-west" }] },
        },
      },
    });
    assert.deepEqual(r.messages, []);
  });

  await t.step("locality distribution that adds up to 100", () => {
    const r = dr({
      host: "cart",
      trafficPolicy: {
        loadBalancer: {
          localityLbSetting: {
            distribute: [{ from: "us-west/zone1/*", to: { "us-west/zone1/*": 80, "us-west/zone2/*": 20 } }],
          },
        },
      },
    });
    assert.deepEqual(r.messages, []);
  });
});

Deno.test("DestinationRule rejects invalid rules with the field path", async (t) => {
  await t.step("missing host", () => {
    assert.deepEqual(dr({ subsets: [{ name: "v1", labels: { version: "v1" } }] }).errors, ["spec.host"]);
  });

  await t.step("subset names that are not DNS labels and bad labels", () => {
    const r = dr({
      host: "a",
      subsets: [{ name: "v1.0", labels: { version: "v1" } }, { name: "v2", labels: { "-bad": "x" } }],
    });
    assert.deepEqual(r.errors, ["spec.subsets[0].name", 'spec.subsets[1].labels["-bad"]']);
    assert.deepEqual(dr({ host: "a", subsets: [{ labels: { version: "v1" } }] }).errors, [
      "spec.subsets[0].name",
    ]);
  });

  await t.step("empty traffic policy and empty connection pool", () => {
    assert.deepEqual(dr({ host: "a", trafficPolicy: {} }).errors, ["spec.trafficPolicy"]);
    assert.deepEqual(dr({ host: "a", trafficPolicy: { connectionPool: {} } }).errors, [
      "spec.trafficPolicy.connectionPool",
    ]);
  });

  await t.step("out-of-range numbers and durations", () => {
    const r = dr({
      host: "a",
      trafficPolicy: {
        connectionPool: { http: { maxRetries: -1, idleTimeout: "100us" } },
        outlierDetection: { maxEjectionPercent: 101, interval: "0s" },
      },
    });
    assert.deepEqual(r.errors, [
      "spec.trafficPolicy.connectionPool.http.maxRetries",
      "spec.trafficPolicy.connectionPool.http.idleTimeout",
      "spec.trafficPolicy.outlierDetection.interval",
      "spec.trafficPolicy.outlierDetection.maxEjectionPercent",
    ]);
  });

  await t.step("client TLS: MUTUAL without certificates, credentialName with files", () => {
    const mutual = dr({ host: "a", trafficPolicy: { tls: { mode: "MUTUAL" } } });
    assert.deepEqual(mutual.errors, [
      "spec.trafficPolicy.tls.clientCertificate",
      "spec.trafficPolicy.tls.privateKey",
    ]);
    const both = dr({
      host: "a",
      trafficPolicy: { tls: { mode: "SIMPLE", credentialName: "c", caCertificates: "/ca.pem" } },
    });
    assert.deepEqual(both.errors, ["spec.trafficPolicy.tls.caCertificates"]);
    assert.deepEqual(dr({ host: "a", trafficPolicy: { tls: { mode: "STRICT" } } }).errors, [
      "spec.trafficPolicy.tls.mode",
    ]);
  });

  await t.step("load balancer: both simple and consistentHash, cookie without ttl", () => {
    const r = dr({
      host: "a",
      trafficPolicy: { loadBalancer: { simple: "RANDOM", consistentHash: { httpCookie: { name: "c" } } } },
    });
    assert.deepEqual(r.errors, [
      "spec.trafficPolicy.loadBalancer",
      "spec.trafficPolicy.loadBalancer.consistentHash.httpCookie.ttl",
    ]);
  });

  await t.step("locality settings: weights not adding up, failover to the same region, both kinds", () => {
    const lb = (localityLbSetting: unknown) =>
      dr({ host: "a", trafficPolicy: { loadBalancer: { localityLbSetting } } });
    assert.deepEqual(lb({ distribute: [{ from: "us/*", to: { "us/a": 50 } }] }).errors, [
      "spec.trafficPolicy.loadBalancer.localityLbSetting.distribute[0].to",
    ]);
    assert.deepEqual(lb({ failover: [{ from: "us", to: "us" }] }).errors, [
      "spec.trafficPolicy.loadBalancer.localityLbSetting.failover[0]",
    ]);
    assert.deepEqual(
      lb({ distribute: [{ from: "a", to: { b: 100 } }], failover: [{ from: "a", to: "b" }] }).errors,
      ["spec.trafficPolicy.loadBalancer.localityLbSetting"],
    );
  });

  await t.step("port-level settings without port or policy", () => {
    const r = dr({
      host: "a",
      trafficPolicy: { portLevelSettings: [{ tls: { mode: "ISTIO_MUTUAL" } }, { port: { number: 80 } }] },
    });
    assert.deepEqual(r.errors, [
      "spec.trafficPolicy.portLevelSettings[0].port",
      "spec.trafficPolicy.portLevelSettings[1]",
    ]);
  });

  await t.step("unknown fields", () => {
    assert.deepEqual(dr({ host: "a", trafficPolicy: { tls: { mode: "SIMPLE", insecure: true } } }).errors, [
      "spec.trafficPolicy.tls.insecure",
    ]);
  });
});

Deno.test("DestinationRule warns about deprecated and ignored settings", () => {
  const r = dr({
    host: "a",
    subsets: [{ name: "v1" }, { name: "v1" }],
    trafficPolicy: { outlierDetection: { consecutiveErrors: 5 } },
  });
  assert.deepEqual(r.errors, []);
  assert.deepEqual(r.warnings, [
    "spec.trafficPolicy.outlierDetection.consecutiveErrors",
    "spec.subsets[1].name",
  ]);
});
