/**
 * Protocol-aware network filters for opaque ports, as the reference builds them when its
 * `DISCOVERY_ENABLE_{REDIS,MYSQL,THRIFT}_FILTER` switches are on: redis_proxy and thrift_proxy replace the TCP
 * proxy (they route to the cluster themselves), mysql_proxy only gathers statistics and goes before it. Redis
 * clusters balance with Maglev so that a key keeps going to one host (client-side sharding). Unlike the
 * reference's, the thrift_proxy has a catch-all route to the cluster: without one it would route no call.
 *
 * @module
 */
import { TYPE_URL } from "@mesh/proto/type_urls";
import type { ServiceProtocol } from "../../model/service.ts";
import type { ProtocolFilterOptions } from "../../push/push_context.ts";
import { durationFromNanos } from "../envoy_duration.ts";
import type { EnvoyObject } from "../route_match.ts";

/** The protocol filter a port gets. */
export type ProtocolFilter = "redis" | "mysql" | "thrift";

/** The reference's fixed Redis operation timeout. */
const REDIS_OP_TIMEOUT_NS = 5_000_000_000n;

/** The filter a port of `protocol` gets under `options`, if any. */
export function protocolFilterFor(
  protocol: ServiceProtocol,
  options: ProtocolFilterOptions,
): ProtocolFilter | undefined {
  if (protocol === "Redis" && options.redis) return "redis";
  if (protocol === "MySQL" && options.mysql) return "mysql";
  if (protocol === "Thrift" && options.thrift) return "thrift";
  return undefined;
}

/**
 * The network filters of a chain that would otherwise end in `tcp`: the protocol filter to `cluster` (the
 * first destination, as in the reference: redis and thrift proxies route to one cluster), then `tcp` unless the
 * protocol filter ends the chain itself.
 */
export function protocolFilterStack(
  filter: ProtocolFilter | undefined,
  statPrefix: string,
  cluster: string,
  tcp: EnvoyObject,
): EnvoyObject[] {
  switch (filter) {
    case undefined:
      return [tcp];
    case "redis":
      return [{
        name: "envoy.filters.network.redis_proxy",
        typed_config: {
          "@type": TYPE_URL.redisProxy,
          stat_prefix: statPrefix,
          latency_in_micros: true,
          settings: { op_timeout: durationFromNanos(REDIS_OP_TIMEOUT_NS) },
          prefix_routes: { catch_all_route: { cluster } },
        },
      }];
    case "mysql":
      return [{
        name: "envoy.filters.network.mysql_proxy",
        typed_config: { "@type": TYPE_URL.mysqlProxy, stat_prefix: statPrefix },
      }, tcp];
    case "thrift":
      return [{
        name: "envoy.filters.network.thrift_proxy",
        typed_config: {
          "@type": TYPE_URL.thriftProxy,
          stat_prefix: statPrefix,
          // An empty method name matches every call.
          route_config: {
            name: cluster,
            routes: [{ match: { method_name: "" }, route: { cluster } }],
          },
        },
      }];
  }
}
