import assert from "node:assert/strict";
import { describeKey, generateKeyPair, signingAlgorithmFor } from "./key_pair.ts";

Deno.test("generateKeyPair makes RSA and ECDSA signing keys", async (t) => {
  await t.step("RSA 2048 by default", async () => {
    const keys = await generateKeyPair();
    assert.equal(describeKey(keys.privateKey), "RSA 2048");
    assert.equal(describeKey(keys.publicKey), "RSA 2048");
    assert.deepEqual(signingAlgorithmFor(keys.privateKey), { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" });
    assert.ok(keys.privateKey.extractable, "private keys must be exportable as PEM");
  });
  await t.step("RSA of a configured size", async () => {
    const keys = await generateKeyPair({ algorithm: "RSA", size: 3072 });
    assert.equal(describeKey(keys.privateKey), "RSA 3072");
  });
  await t.step("ECDSA P-256", async () => {
    const keys = await generateKeyPair({ algorithm: "ECDSA" });
    assert.equal(describeKey(keys.privateKey), "ECDSA P-256");
    assert.deepEqual(signingAlgorithmFor(keys.privateKey), { name: "ECDSA", hash: "SHA-256" });
  });
  await t.step("RSA sizes outside 2048–8192 or not a multiple of 8 are rejected", async () => {
    for (const size of [1024, 2049, 16384]) {
      await assert.rejects(generateKeyPair({ algorithm: "RSA", size }), {
        name: "RangeError",
        message: `Invalid RSA key size ${size}: expected a multiple of 8 between 2048 and 8192`,
      });
    }
  });
});
