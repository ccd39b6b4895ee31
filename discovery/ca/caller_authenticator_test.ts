import assert from "node:assert/strict";
import { createSelfSignedCa, generateKeyPair, issueCertificate } from "@mesh/shared/pki";
import {
  authenticateCaller,
  AuthenticationError,
  ClientCertAuthenticator,
  JwtAuthenticator,
} from "./caller_authenticator.ts";
import { startOidcIssuer as startIssuer } from "@mesh/shared/testing/oidc_issuer";

const SA = { "kubernetes.io": { namespace: "shop", serviceaccount: { name: "ratings" } } };

Deno.test("JWT authentication: audience, signature and service account decide", async (t) => {
  const issuer = await startIssuer();
  const jwt = (requireAudience = false) =>
    new JwtAuthenticator({
      audiences: ["mesh-ca"],
      requireAudience,
      issuer: issuer.url,
      trustDomain: "cluster.local",
    });
  const call = (token: string) => ({ authorization: [`Bearer ${token}`] });
  try {
    await t.step(
      "a token for one of TOKEN_AUDIENCES names the service account's SPIFFE identity",
      async () => {
        assert.deepEqual(
          await jwt().authenticate(call(await issuer.sign({ ...SA, aud: ["other", "mesh-ca"] }))),
          [
            "spiffe://cluster.local/ns/shop/sa/ratings",
          ],
        );
      },
    );
    await t.step("sub as system:serviceaccount:<ns>:<sa> works too", async () => {
      const token = await issuer.sign({ sub: "system:serviceaccount:web:frontend", aud: "mesh-ca" });
      assert.deepEqual(await jwt().authenticate(call(token)), ["spiffe://cluster.local/ns/web/sa/frontend"]);
    });
    await t.step("another audience is refused", async () => {
      await assert.rejects(() =>
        jwt().authenticate(call(issuer.sign({ ...SA, aud: "other" }) as unknown as string))
      );
      const token = await issuer.sign({ ...SA, aud: "other" });
      await assert.rejects(() => jwt().authenticate(call(token)), /audience is none of TOKEN_AUDIENCES/);
    });
    await t.step("no audience passes unless REQUIRE_3P_TOKEN", async () => {
      const token = await issuer.sign(SA);
      assert.equal((await jwt().authenticate(call(token)))!.length, 1);
      await assert.rejects(() => jwt(true).authenticate(call(token)), /REQUIRE_3P_TOKEN/);
    });
    await t.step(
      "a token from another issuer or a forged signature is refused without echoing it",
      async () => {
        const other = await startIssuer();
        try {
          const forged = await other.sign({ ...SA, aud: "mesh-ca" }, issuer.url);
          await assert.rejects(
            () => jwt().authenticate(call(forged)),
            (e) => e instanceof AuthenticationError && !e.message.includes(forged),
          );
        } finally {
          await other.close();
        }
      },
    );
    await t.step("no bearer token: this authenticator does not apply", async () => {
      assert.equal(await jwt().authenticate({ authorization: [] }), undefined);
    });
  } finally {
    await issuer.close();
  }
});

Deno.test("The first authenticator that finds its credential decides; none at all is Unauthenticated", async () => {
  const ca = await createSelfSignedCa({ org: "cluster.local", ttlMs: 3_600_000 });
  const keys = await generateKeyPair({ algorithm: "ECDSA" });
  const cert = await issueCertificate(ca, {
    publicKey: keys.publicKey,
    uris: ["spiffe://cluster.local/ns/shop/sa/ratings"],
    ttlMs: 3_600_000,
  });
  const chain = [
    new ClientCertAuthenticator(),
    new JwtAuthenticator({ audiences: [], requireAudience: false, issuer: "", trustDomain: "cluster.local" }),
  ];
  assert.deepEqual(
    await authenticateCaller(chain, { peerCertificateDer: new Uint8Array(cert.rawData), authorization: [] }),
    ["spiffe://cluster.local/ns/shop/sa/ratings"],
  );
  await assert.rejects(() => authenticateCaller(chain, { authorization: [] }), /no credential/);
  await assert.rejects(
    () => authenticateCaller(chain, { authorization: ["Bearer x.y.z"] }),
    /TOKEN_ISSUER is not set/,
  );
});

Deno.test("With federation, a root vouches only for identities of its own trust domain", async () => {
  const mesh = await createSelfSignedCa({ org: "cluster.local", ttlMs: 3_600_000 });
  const partner = await createSelfSignedCa({ org: "partner.example", ttlMs: 3_600_000 });
  const meshAnchor = new Uint8Array(mesh.certificate.rawData);
  const partnerAnchor = new Uint8Array(partner.certificate.rawData);
  const federation = {
    trustDomainOfAnchor: (der: Uint8Array) =>
      der.length === partnerAnchor.length && der.every((b, i) => b === partnerAnchor[i])
        ? "partner.example"
        : undefined,
    trustDomains: () => ["partner.example"],
  };
  const authenticator = new ClientCertAuthenticator(federation);
  const present = async (ca: typeof mesh, anchor: Uint8Array, uris: string[]) => {
    const keys = await generateKeyPair({ algorithm: "ECDSA" });
    const cert = await issueCertificate(ca, { publicKey: keys.publicKey, uris, ttlMs: 3_600_000 });
    const leaf = new Uint8Array(cert.rawData);
    return await authenticator.authenticate({
      peerCertificateDer: leaf,
      peerCertificateChainDer: [leaf, anchor],
      authorization: [],
    });
  };
  assert.deepEqual(
    await present(partner, partnerAnchor, ["spiffe://partner.example/ns/shop/sa/ratings"]),
    ["spiffe://partner.example/ns/shop/sa/ratings"],
  );
  await assert.rejects(
    () => present(partner, partnerAnchor, ["spiffe://cluster.local/ns/shop/sa/admin"]),
    /chains to the bundle of trust domain "partner.example" but names no identity of it/,
    "a partner's CA cannot speak for the mesh",
  );
  assert.deepEqual(
    await present(partner, partnerAnchor, [
      "spiffe://cluster.local/ns/shop/sa/admin",
      "spiffe://partner.example/ns/shop/sa/ratings",
    ]),
    ["spiffe://partner.example/ns/shop/sa/ratings"],
    "of several names, only the partner's own count",
  );
  assert.deepEqual(
    await present(mesh, meshAnchor, ["spiffe://cluster.local/ns/shop/sa/ratings"]),
    ["spiffe://cluster.local/ns/shop/sa/ratings"],
  );
  await assert.rejects(
    () => present(mesh, meshAnchor, ["spiffe://partner.example/ns/shop/sa/ratings"]),
    /chains to the mesh's roots but names only identities of federated trust domains/,
  );
});

Deno.test("ClientCertAuthenticator remembers the identities of at most memoSize certificates, each its own", async () => {
  const ca = await createSelfSignedCa({ org: "cluster.local", ttlMs: 3_600_000 });
  const keys = await generateKeyPair({ algorithm: "ECDSA" });
  const ders = await Promise.all(["a", "b", "c"].map(async (sa) =>
    new Uint8Array(
      (await issueCertificate(ca, {
        publicKey: keys.publicKey,
        uris: [`spiffe://cluster.local/ns/shop/sa/${sa}`],
        ttlMs: 3_600_000,
      })).rawData,
    )
  ));
  const authenticator = new ClientCertAuthenticator(undefined, 2);
  const idOf = async (der: Uint8Array) =>
    (await authenticator.authenticate({ peerCertificateDer: der, authorization: [] }))?.[0];
  for (const round of [1, 2]) {
    for (const [i, sa] of ["a", "b", "c", "a"].entries()) {
      assert.equal(
        await idOf(ders["abc".indexOf(sa)]),
        `spiffe://cluster.local/ns/shop/sa/${sa}`,
        `${round}.${i}`,
      );
      assert.ok(authenticator.remembered <= 2);
    }
  }
  const ids = await authenticator.authenticate({ peerCertificateDer: ders[0], authorization: [] });
  ids!.push("spiffe://cluster.local/ns/kube-system/sa/admin");
  assert.equal(await idOf(ders[0]), "spiffe://cluster.local/ns/shop/sa/a");
  assert.deepEqual(await authenticator.authenticate({ peerCertificateDer: ders[0], authorization: [] }), [
    "spiffe://cluster.local/ns/shop/sa/a",
  ], "a caller changing its answer does not change the remembered one");
});
