import assert from "node:assert/strict";
import { check } from "./_check.ts";
import { validateSidecar } from "./sidecar.ts";

const sc = (spec: unknown) => check(validateSidecar, spec);

Deno.test("Sidecar accepts valid listeners", async (t) => {
  await t.step("egress hosts by namespace", () => {
    assert.deepEqual(sc({ egress: [{ hosts: ["abc/*"] }] }).messages, []);
    assert.deepEqual(
      sc({ egress: [{ hosts: ["./*", "istio-system/*", "*/*.example.com", "~/*"] }] }).messages,
      [],
    );
  });

  await t.step("ingress and egress listeners with ports, a catch-all last, and a selector", () => {
    const r = sc({
      workloadSelector: { labels: { app: "ratings" } },
      ingress: [
        {
          port: { number: 9080, protocol: "HTTP", name: "somename" },
          defaultEndpoint: "unix:///var/run/someuds.sock",
        },
        {
          port: { number: 9081, protocol: "HTTP" },
          defaultEndpoint: "127.0.0.1:8080",
          captureMode: "IPTABLES",
        },
        { port: { number: 9082 }, defaultEndpoint: ":8082", bind: "0.0.0.0" },
      ],
      egress: [
        { port: { number: 9080, protocol: "HTTP", name: "egresshttp" }, hosts: ["prod-us1/*"] },
        {
          port: { number: 0, protocol: "HTTP" },
          bind: "unix:///var/run/egress.sock",
          captureMode: "NONE",
          hosts: ["*/*"],
        },
        { hosts: ["istio-system/*"] },
      ],
      outboundTrafficPolicy: {
        mode: "ALLOW_ANY",
        egressProxy: { host: "egress.example.com", port: { number: 443 } },
      },
    });
    assert.deepEqual(r.messages, []);
  });
});

Deno.test("Sidecar rejects invalid listeners with the field path", async (t) => {
  await t.step("missing egress", () => {
    assert.deepEqual(sc({}).errors, ["spec.egress"]);
    assert.deepEqual(sc({ egress: null }).errors, ["spec.egress"]);
  });

  await t.step("egress hosts without namespace, with a bad namespace or short name", () => {
    assert.deepEqual(sc({ egress: [{ hosts: ["example.com", "Bad_ns/*", "ns/short"] }] }).errors, [
      "spec.egress[0].hosts[0]",
      "spec.egress[0].hosts[1]",
      "spec.egress[0].hosts[2]",
    ]);
    assert.deepEqual(sc({ egress: [{ port: { number: 80 } }] }).errors, ["spec.egress[0].hosts"]);
  });

  await t.step("catch-all egress not last, duplicate egress ports", () => {
    const r = sc({
      egress: [{ hosts: ["*/*"] }, { port: { number: 80 }, hosts: ["*/*"] }, {
        port: { number: 80 },
        hosts: ["*/*"],
      }],
    });
    assert.deepEqual(r.errors, ["spec.egress[0]", "spec.egress[2].port"]);
  });

  await t.step("unix listeners need a socket bind and DEFAULT or NONE capture", () => {
    const r = sc({
      egress: [{ port: { number: 0 }, hosts: ["*/*"] }, {
        port: { number: 0 },
        bind: "unix:///a.sock",
        captureMode: "IPTABLES",
        hosts: ["*/*"],
      }],
    });
    assert.deepEqual(r.errors, ["spec.egress[0].bind", "spec.egress[1].captureMode"]);
  });

  await t.step("ingress without port or default endpoint, bad endpoints, duplicate ports", () => {
    const r = sc({
      ingress: [
        { defaultEndpoint: "127.0.0.1:80" },
        { port: { number: 80 } },
        { port: { number: 81 }, defaultEndpoint: "10.0.0.1:80" },
        { port: { number: 81 }, defaultEndpoint: "127.0.0.1:http" },
      ],
      egress: [{ hosts: ["*/*"] }],
    });
    assert.deepEqual(r.errors, [
      "spec.ingress[0].port",
      "spec.ingress[1].defaultEndpoint",
      "spec.ingress[2].defaultEndpoint",
      "spec.ingress[3].defaultEndpoint",
      "spec.ingress[3].port",
    ]);
  });

  await t.step("egress proxy outside ALLOW_ANY, without port; empty selector", () => {
    const r = sc({
      workloadSelector: { labels: {} },
      egress: [{ hosts: ["*/*"] }],
      outboundTrafficPolicy: { mode: "REGISTRY_ONLY", egressProxy: { host: "egress.example.com" } },
    });
    assert.deepEqual(r.errors, [
      "spec.workloadSelector.labels",
      "spec.outboundTrafficPolicy.egressProxy",
      "spec.outboundTrafficPolicy.egressProxy.port",
    ]);
  });
});
