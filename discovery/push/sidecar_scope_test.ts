import assert from "node:assert/strict";
import { networking, proxyIn, serviceEntry, world } from "./_test_support.ts";

const sidecar = (ns: string, name: string, hosts: string[], extra: Record<string, unknown> = {}) =>
  networking("Sidecar", ns, name, { egress: [{ hosts }], ...extra });
const names = (list: readonly { hostname: string; namespace: string }[]) =>
  list.map((s) => `${s.namespace}/${s.hostname}`);

function mesh() {
  const w = world();
  w.apply(
    serviceEntry("app", "api", "api.app.svc.cluster.local"),
    serviceEntry("app", "db", "db.app.svc.cluster.local"),
    serviceEntry("shared", "auth", "auth.shared.svc.cluster.local"),
    serviceEntry("other", "x", "x.other.svc.cluster.local"),
    serviceEntry("mesh-system", "telemetry", "telemetry.mesh-system.svc.cluster.local"),
  );
  return w;
}

Deno.test("Sidecar egress hosts narrow the services a workload sees", async (t) => {
  await t.step("without a Sidecar every visible service is in scope", () => {
    const scope = mesh().push().sidecarScope(proxyIn("app"));
    assert.equal(scope.name, "default");
    assert.equal(scope.services.length, 5);
    assert.deepEqual(scope.egress[0].hosts, [{ namespace: "*", host: "*" }]);
  });

  await t.step("./* and ns/* import the own and the named namespace", () => {
    const w = mesh();
    w.apply(sidecar("app", "default", ["./*", "shared/*"]));
    const scope = w.push().sidecarScope(proxyIn("app"));
    assert.equal(scope.name, "app/default");
    assert.deepEqual(names(scope.services), [
      "app/api.app.svc.cluster.local",
      "shared/auth.shared.svc.cluster.local",
      "app/db.app.svc.cluster.local",
    ]);
  });

  await t.step("*/host imports one host from anywhere; ~/* imports nothing", () => {
    const w = mesh();
    w.apply(sidecar("app", "default", ["*/x.other.svc.cluster.local", "~/*"]));
    assert.deepEqual(names(w.push().servicesVisibleTo(proxyIn("app"))), ["other/x.other.svc.cluster.local"]);
  });

  await t.step("an explicit namespace import takes precedence over */ for that namespace", () => {
    const w = mesh();
    w.apply(sidecar("app", "default", ["app/db.app.svc.cluster.local", "*/*"]));
    const visible = names(w.push().servicesVisibleTo(proxyIn("app")));
    assert.ok(visible.includes("app/db.app.svc.cluster.local"));
    assert.ok(!visible.includes("app/api.app.svc.cluster.local"));
    assert.ok(visible.includes("other/x.other.svc.cluster.local"));
  });

  await t.step("wildcard hosts match by suffix", () => {
    const w = mesh();
    w.apply(sidecar("app", "default", ["*/*.shared.svc.cluster.local"]));
    assert.deepEqual(names(w.push().servicesVisibleTo(proxyIn("app"))), [
      "shared/auth.shared.svc.cluster.local",
    ]);
  });

  await t.step("egress hosts never reveal a service its exportTo hides", () => {
    const w = mesh();
    w.apply(serviceEntry("shared", "secret", "secret.shared.svc.cluster.local", ["."]));
    w.apply(sidecar("app", "default", ["shared/*"]));
    assert.deepEqual(names(w.push().servicesVisibleTo(proxyIn("app"))), [
      "shared/auth.shared.svc.cluster.local",
    ]);
  });
});

Deno.test("The Sidecar that applies: selector match, namespace default, root default", async (t) => {
  const w = mesh();
  w.apply(
    sidecar("app", "default", ["./*"]),
    sidecar("app", "for-api", ["shared/*"], { workloadSelector: { labels: { app: "api" } } }),
    sidecar("mesh-system", "global", ["./*", "mesh-system/*"]),
    sidecar("mesh-system", "selected", ["*/*"], { workloadSelector: { labels: { app: "api" } } }),
  );
  const push = w.push();

  await t.step("a workload whose labels match a selector gets that Sidecar", () => {
    assert.equal(push.sidecarScope(proxyIn("app", { app: "api", version: "v1" })).name, "app/for-api");
  });

  await t.step("other workloads of the namespace get the namespace default", () => {
    assert.equal(push.sidecarScope(proxyIn("app", { app: "db" })).name, "app/default");
  });

  await t.step("namespaces without a Sidecar get the root default, '.' meaning their own namespace", () => {
    const scope = push.sidecarScope(proxyIn("other", { app: "api" }));
    assert.equal(scope.name, "mesh-system/global");
    assert.equal(scope.namespace, "other");
    assert.deepEqual(names(scope.services), [
      "mesh-system/telemetry.mesh-system.svc.cluster.local",
      "other/x.other.svc.cluster.local",
    ]);
  });

  await t.step("gateways get the namespace default scope", () => {
    assert.equal(push.sidecarScope(proxyIn("app", { app: "api" }, "router")).name, "default");
  });

  await t.step("scopes are computed once per Sidecar and namespace", () => {
    assert.equal(push.sidecarScope(proxyIn("other")), push.sidecarScope(proxyIn("other", { x: "y" })));
    assert.ok(Object.isFrozen(push.sidecarScope(proxyIn("other"))));
  });
});

Deno.test("Sidecar scopes carry virtual services, ingress and outbound policy", () => {
  const w = mesh();
  w.apply(
    networking("VirtualService", "app", "api-routes", { hosts: ["api"], http: [] }),
    networking("VirtualService", "other", "x-routes", { hosts: ["x"], http: [] }),
    networking("VirtualService", "other", "gw-only", { hosts: ["x"], gateways: ["gw"], http: [] }),
    sidecar("app", "default", ["./*"], {
      ingress: [{
        port: { number: 9080, protocol: "HTTP", name: "http" },
        defaultEndpoint: "127.0.0.1:8080",
      }],
      outboundTrafficPolicy: { mode: "REGISTRY_ONLY" },
    }),
  );
  const push = w.push();
  const scope = push.sidecarScope(proxyIn("app"));
  assert.deepEqual(scope.virtualServices.map((v) => v.resource.meta.name), ["api-routes"]);
  assert.equal(scope.ingress[0].port.number, 9080);
  assert.deepEqual(scope.outboundTrafficPolicy, { mode: "REGISTRY_ONLY" });
  const open = push.sidecarScope(proxyIn("other"));
  assert.deepEqual(open.virtualServices.map((v) => v.resource.meta.name), ["api-routes", "x-routes"]);
  assert.deepEqual(open.outboundTrafficPolicy, { mode: "ALLOW_ANY" });
  assert.deepEqual(push.virtualServicesFor(proxyIn("other"), "mesh"), open.virtualServices);
  assert.deepEqual(push.virtualServicesFor(proxyIn("app"), "other/gw").map((v) => v.resource.meta.name), [
    "gw-only",
  ]);
});
