import assert from "node:assert/strict";
import {
  canonicalGroup,
  findKind,
  findKindByPlural,
  KINDS,
  NETWORKING_GROUP,
  SECURITY_GROUP,
} from "./kinds.ts";

Deno.test("The kind registry lists every mesh kind once with Istio 1.9's versions", async (t) => {
  await t.step("eleven kinds, unique kinds and plurals", () => {
    assert.equal(KINDS.length, 11);
    assert.equal(new Set(KINDS.map((k) => k.kind)).size, 11);
    assert.equal(new Set(KINDS.map((k) => k.plural)).size, 11);
  });

  await t.step("served versions per kind", () => {
    const versions = Object.fromEntries(KINDS.map((k) => [k.kind, k.versions.join(",")]));
    assert.deepEqual(versions, {
      VirtualService: "v1alpha3,v1beta1",
      DestinationRule: "v1alpha3,v1beta1",
      ServiceEntry: "v1alpha3,v1beta1",
      WorkloadEntry: "v1alpha3,v1beta1",
      WorkloadGroup: "v1alpha3",
      Gateway: "v1alpha3,v1beta1",
      Sidecar: "v1alpha3,v1beta1",
      EnvoyFilter: "v1alpha3",
      PeerAuthentication: "v1beta1",
      RequestAuthentication: "v1beta1",
      AuthorizationPolicy: "v1beta1",
    });
  });

  await t.step("Istio's groups are aliases; other groups are unknown", () => {
    assert.equal(canonicalGroup("networking.istio.io"), NETWORKING_GROUP);
    assert.equal(canonicalGroup("security.istio.io"), SECURITY_GROUP);
    assert.equal(canonicalGroup(NETWORKING_GROUP), NETWORKING_GROUP);
    assert.equal(canonicalGroup("apps"), undefined);
  });

  await t.step("lookups by kind and by plural within the canonical group", () => {
    assert.equal(findKind(NETWORKING_GROUP, "Sidecar")?.plural, "sidecars");
    assert.equal(findKind(SECURITY_GROUP, "Sidecar"), undefined);
    assert.equal(findKindByPlural(SECURITY_GROUP, "authorizationpolicies")?.kind, "AuthorizationPolicy");
    assert.equal(findKindByPlural(NETWORKING_GROUP, "serviceentries")?.kind, "ServiceEntry");
  });
});
