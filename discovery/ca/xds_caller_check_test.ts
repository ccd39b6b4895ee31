import assert from "node:assert/strict";
import { parseProxy } from "../model/proxy.ts";
import type { CallerAuthenticator } from "./caller_authenticator.ts";
import { type CheckedCaller, proxyAllowed, xdsCallerCheck } from "./xds_caller_check.ts";

const proxy = (namespace: string, serviceAccount?: string) =>
  parseProxy({
    id: `sidecar~10.0.0.1~app.${namespace}~${namespace}.svc.cluster.local`,
    metadata: { NAMESPACE: namespace, ...(serviceAccount ? { SERVICE_ACCOUNT: serviceAccount } : {}) },
  });

Deno.test("A caller may speak for proxies of its namespace, and of its service account when the node names one", () => {
  const ids = ["spiffe://cluster.local/ns/shop/sa/ratings"];
  assert.equal(proxyAllowed(ids, proxy("shop")), undefined);
  assert.equal(proxyAllowed(ids, proxy("shop", "ratings")), undefined);
  assert.equal(proxyAllowed(ids, proxy("shop", "reviews"))?.code, 7);
  assert.equal(proxyAllowed(ids, proxy("web"))?.code, 7);
});

const identitiesOf = (result: CheckedCaller | { code: number }) =>
  "identities" in result ? result.identities : [];

Deno.test("Identities of another trust domain are refused unless it is an alias or the check is skipped", async () => {
  const as = (id: string): CallerAuthenticator => ({
    name: "fixed",
    authenticate: () => Promise.resolve([id]),
  });
  const call = { metadata: { get: () => [] }, getAuthContext: () => ({}), getPeer: () => "test" } as never;
  const check = (id: string, skipTrustDomain = false) =>
    xdsCallerCheck({
      authenticators: [as(id)],
      identityCheck: true,
      trustDomains: ["cluster.local", "old.local"],
      skipTrustDomain,
    })(call);
  assert.deepEqual(identitiesOf(await check("spiffe://old.local/ns/shop/sa/a")), [
    "spiffe://old.local/ns/shop/sa/a",
  ]);
  const refused = await check("spiffe://evil.example/ns/shop/sa/a");
  assert.equal("code" in refused ? refused.code : 0, 16);
  assert.deepEqual(identitiesOf(await check("spiffe://evil.example/ns/shop/sa/a", true)), [
    "spiffe://evil.example/ns/shop/sa/a",
  ]);
});
