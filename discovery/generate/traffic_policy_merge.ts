/**
 * The traffic policy that applies to one cluster: a DestinationRule's top-level policy, overridden field by
 * field by the subset's, with port-level settings replacing all four parts for their port, as Istio merges them.
 *
 * @module
 */
import type {
  ConnectionPoolSettings,
  LoadBalancerSettings,
  OutlierDetection,
  TrafficPolicy,
} from "@mesh/shared/config/networking/traffic_policy";
import type { ClientTLSSettings } from "@mesh/shared/config/networking/tls_settings";

/** The four parts of a traffic policy that shape a cluster, after merging. */
export interface ClusterPolicy {
  /** Connection pool limits of the cluster. */
  readonly connectionPool?: ConnectionPoolSettings;
  /** Outlier detection of the cluster. */
  readonly outlierDetection?: OutlierDetection;
  /** Load balancing of the cluster. */
  readonly loadBalancer?: LoadBalancerSettings;
  /** TLS to the cluster's endpoints. */
  readonly tls?: ClientTLSSettings;
}

const PARTS = ["connectionPool", "outlierDetection", "loadBalancer", "tls"] as const;

function pick(source: ClusterPolicy): ClusterPolicy {
  const out: Record<string, unknown> = {};
  for (const part of PARTS) if (source[part] !== undefined) out[part] = source[part];
  return out as ClusterPolicy;
}

/**
 * The parts of `policy` for `port`: port-level settings for that port replace all four parts (a part they leave
 * out falls back to the default, not to the top level, as the DestinationRule API documents).
 */
export function policyForPort(policy: TrafficPolicy, port: number): ClusterPolicy {
  const portLevel = policy.portLevelSettings?.find((p) => p.port.number === port);
  return pick(portLevel ?? policy);
}

/**
 * Merges a DestinationRule's top-level policy with a subset's for one port; undefined when neither exists.
 * Subset parts override top-level parts one by one; the subset's port-level settings for the port replace all.
 */
export function mergeTrafficPolicy(
  topLevel: TrafficPolicy | undefined,
  subset: TrafficPolicy | undefined,
  port: number,
): ClusterPolicy | undefined {
  if (topLevel === undefined && subset === undefined) return undefined;
  const merged: Record<string, unknown> = topLevel === undefined ? {} : { ...policyForPort(topLevel, port) };
  if (subset !== undefined) {
    for (const part of PARTS) if (subset[part] !== undefined) merged[part] = subset[part];
    const portLevel = subset.portLevelSettings?.find((p) => p.port.number === port);
    if (portLevel !== undefined) return pick(portLevel);
  }
  return merged as ClusterPolicy;
}
