import assert from "node:assert/strict";
import { networking, proxyIn, world } from "./_test_support.ts";
import { resolveGatewayName } from "./resolve_names.ts";

const vs = (ns: string, name: string, spec: Record<string, unknown>) =>
  networking("VirtualService", ns, name, spec);
const route = (host: string) => ({ route: [{ destination: { host } }] });

Deno.test("resolveGatewayName resolves every form Istio accepts", () => {
  assert.equal(resolveGatewayName("mesh", "ns"), "mesh");
  assert.equal(resolveGatewayName("gw", "ns"), "ns/gw");
  assert.equal(resolveGatewayName("./gw", "ns"), "ns/gw");
  assert.equal(resolveGatewayName("other/gw", "ns"), "other/gw");
  assert.equal(resolveGatewayName("gw.other.svc.cluster.local", "ns"), "other/gw");
  assert.equal(resolveGatewayName("gw.other", "ns"), "other/gw");
});

Deno.test("VirtualServiceIndex resolves names and indexes by gateway", async (t) => {
  const w = world();
  w.apply(
    vs("bookinfo", "reviews", {
      hosts: ["reviews"],
      http: [{ match: [{ gateways: ["gw"] }], ...route("reviews"), mirror: { host: "shadow" } }],
      tcp: [{ route: [{ destination: { host: "db" } }] }],
    }),
    vs("bookinfo", "front", {
      hosts: ["bookinfo.example.com"],
      gateways: ["gw", "mesh"],
      http: [route("productpage")],
    }),
    vs("other", "private", { hosts: ["p.example.com"], exportTo: ["."], http: [] }),
  );
  const push = w.push();

  await t.step("short hosts become FQDNs of the resource's namespace; mesh is the default gateway", () => {
    const reviews = push.virtualServiceIndex.all.find((v) => v.resource.meta.name === "reviews")!;
    assert.deepEqual(reviews.hosts, ["reviews.bookinfo.svc.cluster.local"]);
    assert.deepEqual(reviews.gateways, ["mesh"]);
    const spec = reviews.resource.spec;
    assert.equal(spec.http![0].route![0].destination.host, "reviews.bookinfo.svc.cluster.local");
    assert.equal(spec.http![0].mirror!.host, "shadow.bookinfo.svc.cluster.local");
    assert.deepEqual(spec.http![0].match![0].gateways, ["bookinfo/gw"]);
    assert.equal(spec.tcp![0].route[0].destination.host, "db.bookinfo.svc.cluster.local");
  });

  await t.step("by gateway, filtered by exportTo", () => {
    const names = (gw: string, ns: string) =>
      push.virtualServiceIndex.forGateway(gw, ns).map((v) => v.resource.meta.name);
    assert.deepEqual(names("bookinfo/gw", "anywhere"), ["front"]);
    assert.deepEqual(names("mesh", "other"), ["reviews", "front", "private"]);
    assert.deepEqual(names("mesh", "bookinfo"), ["reviews", "front"]);
    assert.deepEqual(push.virtualServiceIndex.gateways(), ["bookinfo/gw", "mesh"]);
  });
});

Deno.test("VirtualServiceIndex merges delegates into their roots", async (t) => {
  const root = vs("gw-ns", "root", {
    hosts: ["shop.example.com"],
    gateways: ["gw"],
    http: [
      {
        name: "cart",
        match: [{ uri: { prefix: "/cart" } }],
        delegate: { name: "cart", namespace: "cart" },
        timeout: "5s",
      },
      { name: "gone", match: [{ uri: { prefix: "/gone" } }], delegate: { name: "missing" } },
      {
        name: "hidden",
        match: [{ uri: { prefix: "/hidden" } }],
        delegate: { name: "hidden", namespace: "cart" },
      },
      { name: "rest", ...route("web") },
    ],
  });
  const cart = vs("cart", "cart", {
    http: [
      { name: "add", match: [{ uri: { prefix: "/cart/add" } }], ...route("cart-add") },
      { name: "conflict", match: [{ uri: { prefix: "/other" } }], ...route("nope") },
      { name: "all", ...route("cart") },
    ],
  });
  const hidden = vs("cart", "hidden", { exportTo: ["."], http: [route("secret")] });

  await t.step("matching delegate routes replace the delegating route, with root policies inherited", () => {
    const w = world();
    w.apply(root, cart, hidden);
    const [merged] = w.push().virtualServiceIndex.all;
    assert.equal(
      w.push().virtualServiceIndex.all.length,
      1,
      "delegates are not virtual services of their own",
    );
    assert.deepEqual(merged.delegates, ["cart/cart"]);
    const http = merged.resource.spec.http!;
    assert.deepEqual(http.map((r) => r.name), ["cart-add", "cart-all", "rest"]);
    assert.deepEqual(
      http[0].match,
      [{ name: undefined, uri: { prefix: "/cart/add" } }].map(({ uri }) => ({ uri })),
    );
    assert.deepEqual(http[1].match, [{ uri: { prefix: "/cart" } }]);
    assert.equal(http[0].timeout, "5s");
    assert.equal(http[0].route![0].destination.host, "cart-add.cart.svc.cluster.local");
    assert.equal(http[0].delegate, undefined);
  });

  await t.step("with delegation disabled, roots are ignored too", () => {
    const w = world();
    w.apply(root, cart);
    assert.equal(w.push({ enableVirtualServiceDelegate: false }).virtualServiceIndex.all.length, 0);
  });
});

Deno.test("VirtualServiceIndex reports hosts claimed twice on one gateway", () => {
  const w = world();
  w.apply(
    vs("a", "first", { hosts: ["api.example.com"], http: [] }),
    vs("b", "second", { hosts: ["api.example.com"], http: [] }),
    vs("c", "private-1", { hosts: ["p.example.com"], exportTo: ["."], http: [] }),
    vs("d", "private-2", { hosts: ["p.example.com"], exportTo: ["."], http: [] }),
  );
  const push = w.push();
  assert.deepEqual(push.problems.keys("discovery_vservice_dup_domain"), ["api.example.com"]);
  assert.deepEqual(
    push.virtualServicesFor(proxyIn("x"), "mesh").map((v) => v.resource.meta.name),
    ["first", "second"],
    "oldest first, so generators keep the first",
  );
});
