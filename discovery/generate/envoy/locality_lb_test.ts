import assert from "node:assert/strict";
import { parseProxy } from "../../model/proxy.ts";
import { networking, run, World } from "../_test_world.ts";
import { envoyResources } from "./_test_envoy.ts";
import { envoyCdsGenerator } from "./envoy_cds.ts";
import { envoyEdsGenerator } from "./envoy_eds.ts";
import { applyLocalityLb, localityMatches } from "./locality_lb.ts";

type Obj = Record<string, unknown>;

const group = (region: string, zone: string, subZone: string, endpoints = 1) => ({
  locality: { region, zone, ...(subZone ? { sub_zone: subZone } : {}) },
  lb_endpoints: Array.from({ length: endpoints }, (_, i) => ({ endpoint: { i } })),
  load_balancing_weight: { value: endpoints },
});
const summary = (groups: Obj[]) =>
  groups.map((g) => {
    const l = g.locality as Obj;
    return `${l.region}/${l.zone}/${l.sub_zone ?? ""} p${g.priority ?? 0} w${
      (g.load_balancing_weight as Obj).value
    }`;
  });

Deno.test("localityMatches compares region, zone and sub-zone, a trailing * matching the rest", () => {
  assert.ok(localityMatches("us/east/a", "us/east/a"));
  assert.ok(localityMatches("us/east/a", "us/*"));
  assert.ok(localityMatches("us/east/a", "us/east"));
  assert.ok(localityMatches("us/east/a", "*"));
  assert.ok(!localityMatches("us/west/a", "us/east/*"));
});

Deno.test("Failover puts localities in consecutive priorities by nearness, a named failover region next", () => {
  const groups = [
    group("us", "east", "a"),
    group("us", "east", "b"),
    group("us", "west", ""),
    group("eu", "west", ""),
    group("ap", "south", ""),
  ];
  assert.deepEqual(summary(applyLocalityLb(groups, { proxyLocality: "us/east/a", setting: {} })), [
    "us/east/a p0 w1",
    "us/east/b p1 w1",
    "us/west/ p2 w1",
    "eu/west/ p3 w1",
    "ap/south/ p3 w1",
  ]);
  assert.deepEqual(
    summary(applyLocalityLb(groups, {
      proxyLocality: "us/east/a",
      setting: { failover: [{ from: "us", to: "ap" }] },
    })),
    ["us/east/a p0 w1", "us/east/b p1 w1", "us/west/ p2 w1", "eu/west/ p4 w1", "ap/south/ p3 w1"],
  );
  assert.deepEqual(
    summary(applyLocalityLb([group("eu", "west", ""), group("ap", "south", "")], {
      proxyLocality: "us/east/a",
      setting: {},
    })),
    ["eu/west/ p0 w1", "ap/south/ p0 w1"],
    "priorities start at 0 even when nothing is near",
  );
});

Deno.test("Distribute gives each named locality its share, split by endpoints; others get nothing", () => {
  const groups = [
    group("us", "east", "a", 3),
    group("us", "east", "b", 1),
    group("us", "west", "", 2),
    group("eu", "x", ""),
  ];
  const out = applyLocalityLb(groups, {
    proxyLocality: "us/east/a",
    setting: {
      distribute: [{ from: "eu/*", to: { "eu/*": 100 } }, {
        from: "us/east/*",
        to: { "us/east/*": 80, "us/west/*": 20 },
      }],
    },
  });
  assert.deepEqual(summary(out), ["us/east/a p0 w60", "us/east/b p0 w20", "us/west/ p0 w20"]);
});

Deno.test("Envoy EDS applies locality failover for a proxy that says where it runs, when outlier detection is on", () => {
  const world = new World().apply(
    ...envoyResources(),
    networking("DestinationRule", "example", "greeter", {
      host: "greeter.example.svc.cluster.local",
      trafficPolicy: {
        outlierDetection: { consecutive5xxErrors: 5, interval: "10s", baseEjectionTime: "30s" },
      },
    }),
  );
  const proxy = parseProxy({
    id: "sidecar~10.9.9.9~app.example~example.svc.cluster.local",
    metadata: { NAMESPACE: "example" },
    locality: { region: "region1", zone: "zone2" },
  });
  const push = world.push();
  const eds = run(envoyEdsGenerator, proxy, push);
  const cla = eds.byName.get("outbound|7070||greeter.example.svc.cluster.local")!;
  assert.deepEqual(summary(cla.endpoints as Obj[]).map((s) => s.replace(/ w\d+$/, "")), [
    "region1/zone1/ p1",
    "region1/zone2/ p0",
  ]);
  const withoutLocality = run(
    envoyEdsGenerator,
    parseProxy({
      id: "sidecar~10.9.9.8~app.example~example.svc.cluster.local",
      metadata: { NAMESPACE: "example" },
    }),
    push,
  ).byName.get("outbound|7070||greeter.example.svc.cluster.local")!;
  assert.ok((withoutLocality.endpoints as Obj[]).every((g) => g.priority === undefined));
  const cluster = run(envoyCdsGenerator, proxy, push).byName.get(
    "outbound|7070||greeter.example.svc.cluster.local",
  )!;
  assert.equal(
    (cluster.common_lb_config as Obj).locality_weighted_lb_config,
    undefined,
    "failover needs no weights",
  );
  assert.ok((cluster.common_lb_config as Obj).healthy_panic_threshold, "outlier detection's setting stays");
});

Deno.test("A distribute rule turns locality weights on in CDS, next to outlier detection's settings", () => {
  const world = new World().apply(
    ...envoyResources(),
    networking("DestinationRule", "example", "greeter", {
      host: "greeter.example.svc.cluster.local",
      trafficPolicy: {
        outlierDetection: { consecutive5xxErrors: 5 },
        loadBalancer: {
          localityLbSetting: { distribute: [{ from: "region1/*", to: { "region1/zone1/*": 100 } }] },
        },
      },
    }),
  );
  const proxy = parseProxy({
    id: "sidecar~10.9.9.9~app.example~example.svc.cluster.local",
    metadata: { NAMESPACE: "example" },
    locality: { region: "region1", zone: "zone2" },
  });
  const push = world.push();
  const cluster = run(envoyCdsGenerator, proxy, push).byName.get(
    "outbound|7070||greeter.example.svc.cluster.local",
  )!;
  assert.deepEqual((cluster.common_lb_config as Obj).locality_weighted_lb_config, {});
  assert.ok((cluster.common_lb_config as Obj).healthy_panic_threshold);
  const cla = run(envoyEdsGenerator, proxy, push).byName.get(
    "outbound|7070||greeter.example.svc.cluster.local",
  )!;
  assert.deepEqual(summary(cla.endpoints as Obj[]), ["region1/zone1/ p0 w100"], "zone2 gets no share");
});
