import assert from "node:assert/strict";
import { checkIpSubnet, isIPv4, isIPv6 } from "./ip.ts";

Deno.test("isIPv4 accepts dotted decimals only", () => {
  for (const ok of ["0.0.0.0", "10.1.2.3", "255.255.255.255"]) assert.ok(isIPv4(ok), ok);
  for (const bad of ["256.1.1.1", "1.2.3", "1.2.3.4.5", "01.2.3.4", "a.b.c.d", "1.2.3.4 "]) {
    assert.ok(!isIPv4(bad), bad);
  }
});

Deno.test("isIPv6 accepts full, compressed and IPv4-tailed forms", () => {
  for (
    const ok of ["::", "::1", "2001:db8::1", "fe80::1:2:3:4", "1:2:3:4:5:6:7:8", "::ffff:10.0.0.1", "1::"]
  ) {
    assert.ok(isIPv6(ok), ok);
  }
  for (
    const bad of [
      "1:2:3:4:5:6:7:8:9",
      "1::2::3",
      ":1:2",
      "12345::",
      "fe80::1%eth0",
      "1.2.3.4",
      "::ffff:10.0.0",
    ]
  ) {
    assert.ok(!isIPv6(bad), bad);
  }
});

Deno.test("checkIpSubnet accepts addresses and CIDR blocks", () => {
  for (const ok of ["10.0.0.0/8", "10.0.0.1", "2001:db8::/32", "0.0.0.0/0"]) {
    assert.equal(checkIpSubnet(ok), undefined, ok);
  }
  for (const bad of ["10.0.0.0/33", "10.0.0.0/", "2001:db8::/129", "host/24", "10.0.0.0/08"]) {
    assert.ok(checkIpSubnet(bad), bad);
  }
});
