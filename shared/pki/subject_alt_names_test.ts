import assert from "node:assert/strict";
import { isDnsName, isIpAddress, splitHostNames } from "./subject_alt_names.ts";

Deno.test("isIpAddress accepts IPv4 and IPv6 literals only", () => {
  for (
    const ip of ["127.0.0.1", "0.0.0.0", "255.255.255.255", "::1", "::", "2001:db8::1", "::ffff:10.0.0.1"]
  ) {
    assert.ok(isIpAddress(ip), ip);
  }
  for (
    const text of ["256.0.0.1", "1.2.3", "01.2.3.4", "localhost", "[::1]", "fe80::1%eth0", "1::2::3", ""]
  ) {
    assert.ok(!isIpAddress(text), text);
  }
});

Deno.test("isDnsName accepts RFC 1123 names and a leading wildcard", () => {
  for (const name of ["localhost", "meshd.mesh-system.svc", "*.example.com", "a-b.c1", "A.B"]) {
    assert.ok(isDnsName(name), name);
  }
  for (const name of ["", "-a.b", "a-.b", "a..b", "a_b", "*", "a.*.b", "x".repeat(64)]) {
    assert.ok(!isDnsName(name), name);
  }
});

Deno.test("splitHostNames sorts names into DNS names and IP addresses", () => {
  assert.deepEqual(splitHostNames(["localhost", "127.0.0.1", "::1", "svc.ns"]), {
    dnsNames: ["localhost", "svc.ns"],
    ipAddresses: ["127.0.0.1", "::1"],
  });
});
