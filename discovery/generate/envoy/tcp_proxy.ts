/**
 * The tcp_proxy network filter every opaque-TCP filter chain ends in, for sidecars and gateways alike.
 *
 * @module
 */
import { TYPE_URL } from "@mesh/proto/type_urls";
import type { WeightedCluster } from "../route_action.ts";
import type { EnvoyObject } from "../route_match.ts";

/**
 * A tcp_proxy to one cluster, or split by weight among several. Stats are prefixed with the cluster's name
 * when there is one destination (as the reference names them), else with `statPrefix`.
 */
export function tcpProxy(
  statPrefix: string,
  clusters: readonly WeightedCluster[],
  accessLog: readonly EnvoyObject[] = [],
): EnvoyObject {
  return {
    name: "envoy.filters.network.tcp_proxy",
    typed_config: {
      "@type": TYPE_URL.tcpProxy,
      stat_prefix: clusters.length === 1 ? clusters[0].name : statPrefix,
      ...(clusters.length === 1
        ? { cluster: clusters[0].name }
        : { weighted_clusters: { clusters: clusters.map((c) => ({ name: c.name, weight: c.weight })) } }),
      ...(accessLog.length > 0 ? { access_log: accessLog } : {}),
    },
  };
}

/** A tcp_proxy to one cluster by name. */
export function tcpProxyTo(cluster: string, accessLog: readonly EnvoyObject[] = []): EnvoyObject {
  return tcpProxy(cluster, [{ name: cluster, weight: 100 }], accessLog);
}
