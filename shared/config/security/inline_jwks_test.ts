import assert from "node:assert/strict";
import { parseInlineJwks } from "./inline_jwks.ts";

Deno.test("parseInlineJwks accepts JWK Sets and single keys", async (t) => {
  await t.step("a set of RSA, EC, OKP and symmetric keys", () => {
    const jwks = {
      keys: [
        { kty: "RSA", n: "0vx7agoebGcQSuuPiLJXZpt", e: "AQAB", kid: "r" },
        {
          kty: "EC",
          crv: "P-256",
          x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
          y: "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
        },
        { kty: "OKP", crv: "Ed25519", x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo" },
        { kty: "oct", k: "GawgguFyGrWKav7AX4VKUg" },
      ],
    };
    assert.deepEqual(parseInlineJwks(JSON.stringify(jwks)), { keys: 4 });
  });
  await t.step("one bare JWK", () => {
    assert.deepEqual(parseInlineJwks('{"kty":"RSA","n":"abc","e":"AQAB"}'), { keys: 1 });
  });
  await t.step("an empty set", () => assert.deepEqual(parseInlineJwks('{"keys":[]}'), { keys: 0 }));
});

Deno.test("parseInlineJwks names the first problem", async (t) => {
  const cases: Record<string, [string, string]> = {
    "not JSON": ["{keys", "is not valid JSON"],
    "not an object": ["[1]", "must be a JSON object (a JWK Set or one JWK), got a list"],
    "keys not a list": ['{"keys":{}}', `"keys" must be a list, got an object`],
    "missing kty": ['{"keys":[{"n":"a"}]}', `keys[0]: "kty" is required, got undefined undefined`],
    "unknown kty": ['{"kty":"DSA"}', `unsupported key type "DSA"; expected one of RSA, EC, oct, OKP`],
    "missing member": ['{"kty":"EC","crv":"P-256","x":"AA"}', `EC key needs "y", got undefined undefined`],
    "bad curve": ['{"kty":"EC","crv":"P-192","x":"AA","y":"AA"}', `unsupported curve "P-192" for EC key`],
    "not base64url": ['{"kty":"RSA","n":"a b","e":"AQAB"}', `"n" of RSA key must be base64url, got "a b"`],
  };
  for (const [name, [text, message]] of Object.entries(cases)) {
    await t.step(name, () => {
      const result = parseInlineJwks(text);
      assert.ok("problem" in result, text);
      assert.ok(result.problem.startsWith(message), `${result.problem} should start with ${message}`);
    });
  }
});
