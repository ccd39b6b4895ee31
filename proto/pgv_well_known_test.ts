import assert from "node:assert/strict";
import {
  isEmail,
  isHostname,
  isHttpHeaderName,
  isHttpHeaderValue,
  isIpv4Address,
  isIpv6Address,
  isUri,
  isUriRef,
  isUuid,
} from "./pgv_well_known.ts";

Deno.test("isHostname accepts DNS names and rejects malformed labels", () => {
  for (const ok of ["a", "reviews.default.svc.cluster.local", "example.com.", "x-1.y2", "a".repeat(63)]) {
    assert.equal(isHostname(ok), true, ok);
  }
  for (
    const bad of [
      "",
      ".",
      "a..b",
      "-a",
      "a-",
      "a_b",
      "a b",
      "*.example.com",
      "a".repeat(64),
      "é.com",
      `${"a.".repeat(127)}ab`,
    ]
  ) {
    assert.equal(isHostname(bad), false, bad);
  }
});

Deno.test("isIpv4Address and isIpv6Address tell the families apart", () => {
  assert.equal(isIpv4Address("10.0.0.1"), true);
  assert.equal(isIpv4Address("256.0.0.1"), false);
  assert.equal(isIpv4Address("10.0.0"), false);
  assert.equal(isIpv6Address("::1"), true);
  assert.equal(isIpv6Address("2001:db8::8a2e:370:7334"), true);
  assert.equal(isIpv6Address("fe80::1%eth0"), false);
  assert.equal(isIpv6Address("10.0.0.1"), false);
});

Deno.test("isEmail, isUri, isUriRef and isUuid follow PGV's formats", () => {
  assert.equal(isEmail("a.b@example.com"), true);
  assert.equal(isEmail("Ops <ops@example.com>"), false);
  assert.equal(isEmail(`${"a".repeat(65)}@example.com`), false);
  assert.equal(isEmail("a@-bad"), false);
  assert.equal(isUri("spiffe://cluster.local/ns/default/sa/x"), true);
  assert.equal(isUri("cluster.local/ns"), false);
  assert.equal(isUriRef("../a?b#c"), true);
  assert.equal(isUriRef("a b"), false);
  assert.equal(isUuid("00000000-0000-0000-0000-000000000000"), true);
  assert.equal(isUuid("00000000000000000000000000000000"), false);
});

Deno.test("isHttpHeaderName matches PGV's pattern, quirks included", async (t) => {
  await t.step("strict: RFC 7230 tokens with an optional leading colon", () => {
    assert.equal(isHttpHeaderName(":path"), true);
    assert.equal(isHttpHeaderName("x-request-id"), true);
    assert.equal(isHttpHeaderName(""), false);
    assert.equal(isHttpHeaderName("a:b"), false);
    assert.equal(isHttpHeaderName("a b"), false);
    // PGV's class holds the range "+-." (0x2B..0x2E), so a comma passes as it does in Envoy.
    assert.equal(isHttpHeaderName("a,b"), true);
  });
  await t.step("not strict: only NUL, CR and LF are rejected", () => {
    assert.equal(isHttpHeaderName("a b:c", false), true);
    assert.equal(isHttpHeaderName("", false), true);
    assert.equal(isHttpHeaderName("a\rb", false), false);
  });
});

Deno.test("isHttpHeaderValue rejects control characters except tab", () => {
  assert.equal(isHttpHeaderValue("text/html; charset=utf-8"), true);
  assert.equal(isHttpHeaderValue("a\tb"), true);
  assert.equal(isHttpHeaderValue("a\u007f"), false);
  assert.equal(isHttpHeaderValue("a\nb"), false);
  assert.equal(isHttpHeaderValue("a\u0001", false), true);
});
