import assert from "node:assert/strict";
import {
  checkFqdn,
  checkNamespacedHost,
  checkWildcardDomain,
  checkWildcardDomainOrIp,
  hostsMatch,
  hostSubsetOf,
} from "./hosts.ts";

Deno.test("checkFqdn accepts DNS names and rejects the rest", () => {
  for (
    const ok of ["reviews", "reviews.default.svc.cluster.local", "mesh.io.", "Reviews.Example.com", "a-b.c1"]
  ) {
    assert.equal(checkFqdn(ok), undefined, ok);
  }
  for (
    const bad of [
      "",
      "-a.com",
      "a_b.com",
      "a..b",
      "example.123",
      "*.a.com",
      "a".repeat(64) + ".com",
      "x.".repeat(128) + "com",
    ]
  ) {
    assert.ok(checkFqdn(bad), bad);
  }
});

Deno.test("checkWildcardDomain accepts a wildcard first label only", () => {
  // `*.` is accepted, as Istio accepts an absolute name whose only label is the wildcard.
  for (const ok of ["*", "*.", "*.example.com", "*-svc.example.com", "*svc.example.com", "example.com"]) {
    assert.equal(checkWildcardDomain(ok), undefined, ok);
  }
  for (const bad of ["a.*.com", "**.com", "*.-a.com", "", "*.com.123"]) {
    assert.ok(checkWildcardDomain(bad), bad);
  }
  assert.equal(checkWildcardDomainOrIp("10.1.2.3"), undefined);
  assert.ok(checkWildcardDomainOrIp("10.1.2.300.4"));
});

Deno.test("hostsMatch and hostSubsetOf follow wildcard semantics", () => {
  assert.ok(hostsMatch("*.example.com", "api.example.com"));
  assert.ok(hostsMatch("*.com", "*.example.com"));
  assert.ok(!hostsMatch("*.example.com", "example.com"));
  assert.ok(!hostsMatch("a.com", "b.com"));
  assert.ok(hostSubsetOf("api.example.com", "*.example.com"));
  assert.ok(hostSubsetOf("*.api.example.com", "*.example.com"));
  assert.ok(!hostSubsetOf("*.example.com", "api.example.com"));
  assert.ok(!hostSubsetOf("*.com", "*.example.com"));
});

Deno.test("checkNamespacedHost validates namespace/host pairs", async (t) => {
  await t.step("sidecars: namespace, ., * or ~ before the host", () => {
    for (const ok of ["abc/*", "./*.example.com", "*/*", "~/*", "prod/api.example.com"]) {
      assert.deepEqual(checkNamespacedHost(ok, "sidecar"), [], ok);
    }
    assert.equal(checkNamespacedHost("api.example.com", "sidecar").length, 1);
    assert.equal(checkNamespacedHost("ns/", "sidecar").length, 1);
    assert.equal(checkNamespacedHost("ns/short", "sidecar").length, 1);
    assert.equal(checkNamespacedHost("bad_ns/*", "sidecar").length, 1);
  });

  await t.step("gateways: bare hosts and IPs too, but not ~", () => {
    for (const ok of ["*", "a.example.com", "ns/*.example.com", "10.0.0.1", "./10.0.0.1"]) {
      assert.deepEqual(checkNamespacedHost(ok, "gateway"), [], ok);
    }
    assert.equal(checkNamespacedHost("~/*", "gateway").length, 1);
    assert.equal(checkNamespacedHost("short", "gateway").length, 1);
  });
});
