import assert from "node:assert/strict";
import { SECURITY_GROUP } from "../../../shared/config/kinds.ts";
import type { Resource } from "../../../shared/config/resource.ts";
import { networking, run, World } from "../_test_world.ts";
import { envoyResources, envoySidecar } from "./_test_envoy.ts";
import { envoyLdsGenerator } from "./envoy_lds.ts";
import { inboundMtlsMode } from "./inbound_mtls.ts";

type Obj = Record<string, unknown>;

function peerAuthentication(namespace: string, name: string, spec: unknown): Resource {
  const r = networking("PeerAuthentication", namespace, name, spec);
  return { ...r, gvk: { ...r.gvk, group: SECURITY_GROUP } };
}

const inboundChains = (...policies: Resource[]) => {
  const push = new World().apply(...envoyResources(), ...policies).push();
  const inbound = run(envoyLdsGenerator, envoySidecar("example", "10.0.2.1", { app: "ratings" }), push).byName
    .get("virtualInbound")!;
  return (inbound.filter_chains as Obj[]).map((c) => c.name);
};

Deno.test("Inbound chains follow PeerAuthentication: PERMISSIVE by default, STRICT mTLS only, DISABLE plaintext only", () => {
  assert.deepEqual(inboundChains(), [
    "inbound|9080|mtls",
    "inbound|9080|plaintext",
    "virtualInbound-catchall",
  ]);
  assert.deepEqual(
    inboundChains(peerAuthentication("mesh-system", "default", { mtls: { mode: "STRICT" } })),
    ["inbound|9080|mtls", "virtualInbound-catchall"],
    "mesh-wide STRICT",
  );
  assert.deepEqual(
    inboundChains(
      peerAuthentication("mesh-system", "default", { mtls: { mode: "STRICT" } }),
      peerAuthentication("example", "ns", { mtls: { mode: "DISABLE" } }),
    ),
    ["inbound|9080|plaintext", "virtualInbound-catchall"],
    "the namespace's policy wins over the mesh's",
  );
  assert.deepEqual(
    inboundChains(
      peerAuthentication("example", "ns", { mtls: { mode: "DISABLE" } }),
      peerAuthentication("example", "ratings", {
        selector: { matchLabels: { app: "ratings" } },
        mtls: { mode: "UNSET" },
        portLevelMtls: { "9080": { mode: "STRICT" } },
      }),
    ),
    ["inbound|9080|mtls", "virtualInbound-catchall"],
    "the workload's port-level mode wins",
  );
});

Deno.test("UNSET inherits from the next level, and nothing set is PERMISSIVE", () => {
  assert.equal(inboundMtlsMode([{ mtls: { mode: "UNSET" } }, { mtls: { mode: "STRICT" } }], 80), "STRICT");
  assert.equal(inboundMtlsMode([], 80), "PERMISSIVE");
});
