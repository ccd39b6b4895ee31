import assert from "node:assert/strict";
import { networking, proxyIn, serviceEntry, world } from "./_test_support.ts";

const dr = (ns: string, name: string, spec: Record<string, unknown>) =>
  networking("DestinationRule", ns, name, spec);
const lb = (simple: string) => ({ loadBalancer: { simple } });

Deno.test("DestinationRules apply with namespace precedence", async (t) => {
  const w = world();
  w.apply(
    serviceEntry("svc-ns", "reviews", "reviews.svc-ns.svc.cluster.local"),
    dr("svc-ns", "exported", { host: "reviews", trafficPolicy: lb("ROUND_ROBIN") }),
    dr("svc-ns", "private", {
      host: "reviews.svc-ns.svc.cluster.local",
      exportTo: ["."],
      trafficPolicy: lb("RANDOM"),
    }),
    dr("client", "override", {
      host: "reviews.svc-ns.svc.cluster.local",
      exportTo: ["."],
      trafficPolicy: lb("LEAST_CONN"),
    }),
    dr("mesh-system", "global", { host: "*.svc.cluster.local", trafficPolicy: lb("PASSTHROUGH") }),
    dr("mesh-system", "root-private", { host: "*.local", exportTo: ["."], trafficPolicy: lb("RANDOM") }),
  );
  const push = w.push();
  const reviews = push.serviceIndex.byHostname("reviews.svc-ns.svc.cluster.local")[0];
  const policy = (ns: string, host: string | typeof reviews = reviews) =>
    push.destinationRule(proxyIn(ns), host)?.spec.trafficPolicy?.loadBalancer?.simple;

  await t.step("the proxy's own namespace first, private rules included", () => {
    assert.equal(policy("client"), "LEAST_CONN");
  });

  await t.step("then the service's namespace: its private rule for its own proxies only", () => {
    assert.equal(push.destinationRule(proxyIn("svc-ns"), reviews)?.sources.length, 2);
    assert.equal(policy("svc-ns"), "ROUND_ROBIN", "the older rule's policy wins the merge");
    assert.equal(policy("elsewhere"), "ROUND_ROBIN");
    assert.deepEqual(push.destinationRule(proxyIn("elsewhere"), reviews)?.sources.map((s) => s.meta.name), [
      "exported",
    ]);
  });

  await t.step("then exported rules of the root namespace, most specific host", () => {
    assert.equal(policy("elsewhere", "ratings.other.svc.cluster.local"), "PASSTHROUGH");
    assert.equal(policy("elsewhere", "example.com"), undefined);
  });

  await t.step("the short host was resolved in the rule's namespace", () => {
    assert.equal(
      push.destinationRule(proxyIn("elsewhere"), reviews)?.host,
      "reviews.svc-ns.svc.cluster.local",
    );
  });
});

Deno.test("DestinationRules for one host merge subsets and report duplicates", () => {
  const w = world();
  w.apply(
    dr("ns", "a", { host: "r.example", subsets: [{ name: "v1", labels: { version: "v1" } }] }),
    dr("ns", "b", {
      host: "r.example",
      trafficPolicy: lb("RANDOM"),
      subsets: [{ name: "v1", labels: { version: "other" } }, { name: "v2", labels: { version: "v2" } }],
    }),
  );
  const push = w.push();
  const rule = push.destinationRule(proxyIn("ns"), "r.example")!;
  assert.deepEqual(rule.spec.subsets?.map((s) => `${s.name}:${s.labels?.version}`), ["v1:v1", "v2:v2"]);
  assert.equal(
    rule.spec.trafficPolicy?.loadBalancer?.simple,
    "RANDOM",
    "taken from the later rule when the first has none",
  );
  assert.deepEqual(rule.sources.map((s) => s.meta.name), ["a", "b"]);
  assert.deepEqual(push.problems.keys("discovery_destrule_subsets"), ["r.example"]);
  assert.ok(Object.isFrozen(rule.spec));
});
