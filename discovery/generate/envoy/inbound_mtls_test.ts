import assert from "node:assert/strict";
import { SECURITY_GROUP } from "@mesh/shared/config/kinds";
import type { Resource } from "@mesh/shared/config/resource";
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

Deno.test("Inbound mesh mTLS takes TLS 1.2 and up with strong ciphers unless DISCOVERY_SIDECAR_ENABLE_INBOUND_TLS_V2 is off", () => {
  const tlsParams = (inboundTlsV2: boolean) => {
    const push = new World().apply(...envoyResources()).push({ inboundTlsV2 });
    const lds = run(envoyLdsGenerator, envoySidecar("example", "10.0.2.1", { app: "ratings" }), push);
    const chain = (lds.byName.get("virtualInbound")!.filter_chains as Obj[]).find((c) =>
      c.name === "inbound|9080|mtls"
    )!;
    const socket = (chain.transport_socket as Obj).typed_config as Obj;
    return (socket.common_tls_context as Obj).tls_params;
  };
  assert.deepEqual(tlsParams(true), {
    tls_minimum_protocol_version: "TLSv1_2",
    cipher_suites: [
      "ECDHE-ECDSA-AES256-GCM-SHA384",
      "ECDHE-RSA-AES256-GCM-SHA384",
      "ECDHE-ECDSA-AES128-GCM-SHA256",
      "ECDHE-RSA-AES128-GCM-SHA256",
      "AES256-GCM-SHA384",
      "AES128-GCM-SHA256",
    ],
  });
  assert.equal(tlsParams(false), undefined);
});
