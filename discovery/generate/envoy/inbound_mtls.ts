/**
 * The mutual TLS mode of a sidecar's inbound port, from PeerAuthentication as Istio resolves it: the oldest
 * policy selecting the workload in its namespace, else its namespace's policy without a selector, else the
 * root namespace's mesh-wide one; `portLevelMtls` of the workload policy overrides a port; `UNSET` inherits from
 * the next level; nothing set means PERMISSIVE.
 *
 * @module
 */
import type { Resource } from "@mesh/shared/config/resource";
import type { MutualTlsMode, PeerAuthenticationSpec } from "@mesh/shared/config/security/peer_authentication";
import { compareByCreation } from "../../model/config_order.ts";
import { selectorIsEmpty, selectorMatches } from "../../model/labels.ts";
import type { Proxy } from "../../model/proxy.ts";
import type { PushContext } from "../../push/push_context.ts";
import { configKey } from "../../push/push_request.ts";

/** The effective mode: UNSET resolved away. */
export type InboundMtlsMode = Exclude<MutualTlsMode, "UNSET">;

/** The policies that apply to a proxy, most specific first, and the keys they come from. */
export function peerAuthenticationsFor(
  proxy: Proxy,
  push: PushContext,
): { policies: PeerAuthenticationSpec[]; dependsOn: string[] } {
  const all = [...push.configs("PeerAuthentication")].sort(compareByCreation) as Resource<
    PeerAuthenticationSpec
  >[];
  const labels = (r: Resource<PeerAuthenticationSpec>) => r.spec.selector?.matchLabels;
  const workload = all.find((r) =>
    r.meta.namespace === proxy.namespace && !selectorIsEmpty(labels(r)) &&
    selectorMatches(labels(r), proxy.metadata.labels)
  );
  const namespace = all.find((r) => r.meta.namespace === proxy.namespace && selectorIsEmpty(labels(r)));
  const mesh = all.find((r) => r.meta.namespace === push.mesh.rootNamespace && selectorIsEmpty(labels(r)));
  const chosen = [workload, namespace, mesh].filter((r): r is Resource<PeerAuthenticationSpec> =>
    r !== undefined
  );
  return {
    policies: chosen.map((r) => r.spec),
    dependsOn: chosen.map((r) => configKey("PeerAuthentication", r.meta.namespace, r.meta.name)),
  };
}

/** The mode of `port` under `policies` (most specific first). */
export function inboundMtlsMode(policies: readonly PeerAuthenticationSpec[], port: number): InboundMtlsMode {
  for (const [i, policy] of policies.entries()) {
    const portMode = i === 0 && !selectorIsEmpty(policy.selector?.matchLabels)
      ? policy.portLevelMtls?.[String(port)]?.mode
      : undefined;
    const mode = portMode && portMode !== "UNSET" ? portMode : policy.mtls?.mode;
    if (mode !== undefined && mode !== "UNSET") return mode;
  }
  return "PERMISSIVE";
}
