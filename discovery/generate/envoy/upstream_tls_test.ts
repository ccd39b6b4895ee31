import assert from "node:assert/strict";
import { upstreamTlsPlan } from "./upstream_tls.ts";

const OPTIONS = {
  autoMtls: false,
  meshExternal: false,
  sni: "outbound_.8080_._.ratings.example.svc.cluster.local",
  identities: ["spiffe://cluster.local/ns/example/sa/ratings"],
  peerExchange: true,
};

Deno.test("upstreamTlsPlan reads MESH_MUTUAL and Istio's ISTIO_MUTUAL alike: mesh mTLS to the service", () => {
  for (const mode of ["MESH_MUTUAL", "ISTIO_MUTUAL"] as const) {
    assert.deepEqual(upstreamTlsPlan({ mode }, OPTIONS), {
      kind: "mesh",
      sni: OPTIONS.sni,
      identities: OPTIONS.identities,
      alpn: ["istio-peer-exchange", "istio"],
    });
  }
  assert.deepEqual(upstreamTlsPlan({ mode: "DISABLE" }, { ...OPTIONS, autoMtls: true }), { kind: "none" });
  assert.equal(upstreamTlsPlan(undefined, { ...OPTIONS, autoMtls: true }).kind, "auto");
});
