import assert from "node:assert/strict";
import { FIRST_PARTY_TOKEN_PATH, parseJwtPolicy, THIRD_PARTY_TOKEN_PATH, tokenPathOf } from "./jwt_policy.ts";

Deno.test("JWT_POLICY names the token file the agent reads, and refuses a value it does not know", () => {
  assert.equal(tokenPathOf(parseJwtPolicy("third-party-jwt")), THIRD_PARTY_TOKEN_PATH);
  assert.equal(THIRD_PARTY_TOKEN_PATH, "./var/run/secrets/tokens/mesh-token");
  assert.equal(tokenPathOf(parseJwtPolicy("first-party-jwt")), FIRST_PARTY_TOKEN_PATH);
  assert.equal(FIRST_PARTY_TOKEN_PATH, "/var/run/secrets/kubernetes.io/serviceaccount/token");
  assert.throws(() => parseJwtPolicy("second-party-jwt"), {
    name: "RangeError",
    message: /^JWT_POLICY="second-party-jwt": expected "third-party-jwt" .* or "first-party-jwt"/,
  });
});
