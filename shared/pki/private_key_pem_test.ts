import assert from "node:assert/strict";
import { describeKey, generateKeyPair } from "./key_pair.ts";
import {
  exportPrivateKeyPem,
  exportPublicKeyPem,
  exportTraditionalPrivateKeyPem,
  importPrivateKeyPem,
} from "./private_key_pem.ts";
import { opensslOk } from "../testing/openssl.ts";
import { needs, OPENSSL } from "../testing/system_tools.ts";

const data = new TextEncoder().encode("signed by the imported key");

async function signsForPublicKey(imported: CryptoKeyPair, publicKey: CryptoKey): Promise<boolean> {
  const algorithm = publicKey.algorithm.name === "ECDSA"
    ? { name: "ECDSA", hash: "SHA-256" }
    : { name: "RSASSA-PKCS1-v1_5" };
  const signature = await crypto.subtle.sign(algorithm, imported.privateKey, data);
  return await crypto.subtle.verify(algorithm, publicKey, signature, data);
}

Deno.test(
  "exportPrivateKeyPem writes PKCS#8 that openssl reads and importPrivateKeyPem reads back",
  needs(OPENSSL),
  async (t) => {
    for (const spec of [{ algorithm: "RSA" as const }, { algorithm: "ECDSA" as const }]) {
      await t.step(`${spec.algorithm} key`, async () => {
        const keys = await generateKeyPair(spec);
        const pem = await exportPrivateKeyPem(keys.privateKey);
        assert.match(pem, /^-----BEGIN PRIVATE KEY-----\n/);
        const text = await opensslOk(["pkey", "-noout", "-text"], pem);
        assert.match(text, spec.algorithm === "RSA" ? /Private-Key: \(2048 bit/ : /ASN1 OID: prime256v1/);

        const imported = await importPrivateKeyPem(pem);
        assert.equal(describeKey(imported.privateKey), describeKey(keys.privateKey));
        assert.ok(await signsForPublicKey(imported, keys.publicKey), "imported key signs for the original");
        assert.equal(await exportPublicKeyPem(imported.publicKey), await exportPublicKeyPem(keys.publicKey));
        assert.equal(await exportPublicKeyPem(keys.publicKey), await opensslOk(["pkey", "-pubout"], pem));
      });
    }
  },
);

Deno.test(
  "exportTraditionalPrivateKeyPem writes PKCS#1 and SEC1 with the curve, which openssl and we read back",
  needs(OPENSSL),
  async (t) => {
    for (
      const [spec, label, said] of [
        [{ algorithm: "RSA" as const }, "RSA PRIVATE KEY", /Private-Key: \(2048 bit/],
        [{ algorithm: "ECDSA" as const }, "EC PRIVATE KEY", /ASN1 OID: prime256v1/],
      ] as const
    ) {
      await t.step(`${spec.algorithm} key`, async () => {
        const keys = await generateKeyPair(spec);
        const pem = await exportTraditionalPrivateKeyPem(keys.privateKey);
        assert.match(pem, new RegExp(`^-----BEGIN ${label}-----\n`));
        assert.match(await opensslOk(["pkey", "-noout", "-text"], pem), said);
        assert.equal(await exportPublicKeyPem(keys.publicKey), await opensslOk(["pkey", "-pubout"], pem));
        const imported = await importPrivateKeyPem(pem);
        assert.ok(await signsForPublicKey(imported, keys.publicKey), "read back, it signs for the original");
      });
    }
  },
);

Deno.test("importPrivateKeyPem reads the formats openssl writes", needs(OPENSSL), async (t) => {
  const cases: [string, string[], RegExp][] = [
    ["PKCS#8 RSA", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"], /^RSA 2048$/],
    ["PKCS#1 RSA", ["genrsa", "-traditional", "2048"], /^RSA 2048$/],
    [
      "PKCS#8 EC P-256",
      ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"],
      /^ECDSA P-256$/,
    ],
    [
      "SEC1 EC P-256 after an EC PARAMETERS block",
      ["ecparam", "-name", "prime256v1", "-genkey"],
      /^ECDSA P-256$/,
    ],
    ["SEC1 EC P-384", ["ecparam", "-name", "secp384r1", "-genkey", "-noout"], /^ECDSA P-384$/],
  ];
  for (const [name, args, description] of cases) {
    await t.step(name, async () => {
      const pem = await opensslOk(args);
      const keys = await importPrivateKeyPem(pem, "test.pem");
      assert.match(describeKey(keys.privateKey), description);
      assert.equal(await exportPublicKeyPem(keys.publicKey), await opensslOk(["pkey", "-pubout"], pem));
      assert.ok(await signsForPublicKey(keys, keys.publicKey));
    });
  }
});

Deno.test("importPrivateKeyPem rejects what it cannot use, naming the source", needs(OPENSSL), async (t) => {
  await t.step("an Ed25519 key is an unsupported algorithm", async () => {
    const pem = await opensslOk(["genpkey", "-algorithm", "ed25519"]);
    await assert.rejects(importPrivateKeyPem(pem, '--tlsKeyFile "k.pem"'), {
      name: "TypeError",
      message:
        'Unsupported key algorithm "1.3.101.112" in private key in --tlsKeyFile "k.pem": expected RSA or ECDSA',
    });
  });
  await t.step("an encrypted PKCS#8 key has no usable block", async () => {
    const plain = await opensslOk(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"]);
    const encrypted = await opensslOk(["pkcs8", "-topk8", "-v2", "aes-256-cbc", "-passout", "pass:x"], plain);
    await assert.rejects(importPrivateKeyPem(encrypted, "k.pem"), {
      name: "SyntaxError",
      message:
        /No "PRIVATE KEY" or "RSA PRIVATE KEY" or "EC PRIVATE KEY" PEM block in k\.pem; found "ENCRYPTED PRIVATE KEY"/,
    });
  });
  await t.step("a certificate is not a key", async () => {
    await assert.rejects(
      importPrivateKeyPem("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"),
      {
        name: "SyntaxError",
      },
    );
  });
  await t.step("garbage inside a PRIVATE KEY block", async () => {
    await assert.rejects(
      importPrivateKeyPem("-----BEGIN PRIVATE KEY-----\nAAECAw==\n-----END PRIVATE KEY-----\n"),
      {
        name: "SyntaxError",
        message: /private key in PEM text/,
      },
    );
  });
  await t.step("exporting a public key as private is a TypeError", async () => {
    const keys = await generateKeyPair({ algorithm: "ECDSA" });
    await assert.rejects(exportPrivateKeyPem(keys.publicKey), { name: "TypeError" });
  });
});
