import assert from "node:assert/strict";
import { networking, proxyIn, world } from "./_test_support.ts";

const gateway = (ns: string, name: string, selector?: Record<string, string>) =>
  networking("Gateway", ns, name, {
    servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["*"] }],
    ...(selector ? { selector } : {}),
  });

Deno.test("Gateways are found by the labels their selector matches", async (t) => {
  const w = world();
  w.apply(
    gateway("mesh-system", "ingress", { app: "ingressgateway" }),
    gateway("team", "team-gw", { app: "ingressgateway", team: "a" }),
    gateway("team", "any"),
  );
  const names = (push: ReturnType<typeof w.push>, ns: string, labels: Record<string, string>) =>
    push.gatewaysFor(proxyIn(ns, labels, "router")).map((g) => g.name);

  await t.step("selector labels must all match; no selector matches every workload", () => {
    const push = w.push();
    assert.deepEqual(names(push, "mesh-system", { app: "ingressgateway" }), [
      "mesh-system/ingress",
      "team/any",
    ]);
    assert.deepEqual(names(push, "mesh-system", { app: "ingressgateway", team: "a" }), [
      "mesh-system/ingress",
      "team/team-gw",
      "team/any",
    ]);
    assert.equal(push.gatewayIndex.get("team/any")?.resource.meta.name, "any");
  });

  await t.step("scoped to the namespace when DISCOVERY_SCOPE_GATEWAY_TO_NAMESPACE is on", () => {
    const push = w.push({ scopeGatewayToNamespace: true });
    assert.deepEqual(names(push, "team", { app: "ingressgateway", team: "a" }), ["team/team-gw", "team/any"]);
  });
});
