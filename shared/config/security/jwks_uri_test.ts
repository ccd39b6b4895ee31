import assert from "node:assert/strict";
import { parseJwksUri } from "./jwks_uri.ts";

Deno.test("parseJwksUri reads scheme, host and port with scheme defaults", async (t) => {
  await t.step("https defaults to 443", () => {
    assert.deepEqual(parseJwksUri("https://Example.com/.well-known/jwks.json"), {
      scheme: "https",
      hostname: "example.com",
      port: 443,
      useTls: true,
    });
  });
  await t.step("http with an explicit port and IPv6 host", () => {
    assert.deepEqual(parseJwksUri("http://[fd00::1]:8080/keys?x=1"), {
      scheme: "http",
      hostname: "fd00::1",
      port: 8080,
      useTls: false,
    });
  });
  await t.step("user info is not part of the host", () => {
    assert.deepEqual(parseJwksUri("https://user:pw@keys.example.com:9443"), {
      scheme: "https",
      hostname: "keys.example.com",
      port: 9443,
      useTls: true,
    });
  });
});

Deno.test("parseJwksUri rejects what cannot be fetched", async (t) => {
  const cases: Record<string, string> = {
    "relative": "/keys",
    "other scheme": "grpc://example.com/keys",
    "no host": "https:///keys",
    "port only": "https://:8443/keys",
    "opaque": "https:example.com",
    "port 0": "https://example.com:0/",
    "port too large": "https://example.com:65536/",
    "port not a number": "https://example.com:http/",
    "unterminated IPv6": "https://[fd00::1/keys",
    "space in host": "https://exa mple.com/",
  };
  for (const [name, uri] of Object.entries(cases)) {
    await t.step(name, () => assert.ok("problem" in parseJwksUri(uri), uri));
  }
});
