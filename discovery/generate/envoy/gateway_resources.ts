/**
 * The Envoy resources of a gateway plan: listeners with a filter chain per server (TLS terminated with the
 * server's credential from SDS over ADS), route configurations with a virtual host per exposed host, and the
 * SDS secrets of `credentialName`s.
 *
 * @module
 */
import { CA_CREDENTIAL_SUFFIX } from "@mesh/shared/credentials/tls_credential";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { envoyRoute } from "../grpc_rds.ts";
import type { DurationObject } from "../envoy_duration.ts";
import { FAULT_FILTER_NAME, ROUTER_FILTER_NAME } from "../route_action.ts";
import type { EnvoyObject } from "../route_match.ts";
import type {
  GatewayL4Plan,
  GatewayListenerPlan,
  GatewayServerPlan,
  GatewayVirtualHost,
} from "./gateway_plan.ts";
import { tcpProxy } from "./tcp_proxy.ts";
import { ROOT_SECRET_NAME, sdsSecretConfig, WORKLOAD_SECRET_NAME } from "./sds_config.ts";
import { BLACK_HOLE_CLUSTER } from "./envoy_cds.ts";
import {
  connectionManagerTracing,
  httpAccessLogs,
  httpMetadataExchange,
  listenerAccessLog,
  tcpAccessLogs,
  tcpMetadataExchange,
} from "./telemetry.ts";

/** The SDS name of the CA certificates of a MUTUAL server's credential. */
export function caSecretName(credentialName: string): string {
  return `${credentialName}${CA_CREDENTIAL_SUFFIX}`;
}

const adsSds = (name: string) => ({ name, sds_config: { ads: {}, resource_api_version: "V3" } });

/** The filter chains of a TCP, TLS passthrough or AUTO_PASSTHROUGH server. */
function l4Chains(
  server: GatewayServerPlan,
  l4: GatewayL4Plan,
  from: GatewayListenerPlan["credentialsFrom"],
  logs: readonly EnvoyObject[],
  mx: readonly EnvoyObject[],
): EnvoyObject[] {
  const names = server.hosts.filter((h) => h !== "*");
  switch (l4.mode) {
    case "tcp":
      return [{
        name: server.routeName,
        ...(server.tls && names.length > 0 ? { filter_chain_match: { server_names: names } } : {}),
        ...(server.tls ? { transport_socket: terminatingTls(server.tls, from) } : {}),
        filters: [...mx, tcpProxy(server.routeName, l4.clusters, logs)],
      }];
    case "passthrough":
      return l4.routes.map((route, i) => ({
        name: `${server.routeName}.${i}`,
        filter_chain_match: { server_names: [...route.sniHosts] },
        filters: [tcpProxy(server.routeName, route.clusters, logs)],
      }));
    case "auto":
      // The SNI the client sends (`outbound_.<port>_.<subset>_.<host>`) names the cluster: the mesh's mTLS
      // passes through untouched.
      return [{
        name: server.routeName,
        ...(names.length > 0 ? { filter_chain_match: { server_names: names } } : {}),
        filters: [
          { name: "envoy.filters.network.sni_cluster", typed_config: { "@type": TYPE_URL.sniCluster } },
          tcpProxy(server.routeName, [{ name: BLACK_HOLE_CLUSTER, weight: 100 }], logs),
        ],
      }];
  }
}

/**
 * A downstream TLS transport socket terminating with the server's credential (and requiring client
 * certificates from its CA when MUTUAL), or with the mesh's certificates when MESH_MUTUAL.
 */
function terminatingTls(
  tls: NonNullable<GatewayServerPlan["tls"]>,
  from: GatewayListenerPlan["credentialsFrom"],
  alpn?: readonly string[],
): EnvoyObject {
  // Mesh mTLS is the gateway's own workload identity, which only its agent holds.
  const sds = from === "discovery" && tls.mode !== "MESH_MUTUAL" ? adsSds : sdsSecretConfig;
  const [certificate, clientCa] = tls.mode === "MESH_MUTUAL"
    ? [WORKLOAD_SECRET_NAME, ROOT_SECRET_NAME]
    : [tls.credentialName, tls.mode === "MUTUAL" ? caSecretName(tls.credentialName) : undefined];
  return {
    name: "envoy.transport_sockets.tls",
    typed_config: {
      "@type": TYPE_URL.downstreamTlsContext,
      common_tls_context: {
        tls_certificate_sds_secret_configs: [sds(certificate)],
        ...(clientCa !== undefined ? { validation_context_sds_secret_config: sds(clientCa) } : {}),
        ...(alpn ? { alpn_protocols: [...alpn] } : {}),
      },
      ...(clientCa !== undefined ? { require_client_certificate: { value: true } } : {}),
    },
  };
}

/** The gateway listener of a plan. */
export function gatewayListener(plan: GatewayListenerPlan): EnvoyObject {
  const seen = new Set<string>();
  const chains: EnvoyObject[] = [];
  const tcpLogs = tcpAccessLogs(plan.telemetry);
  const httpLogs = httpAccessLogs(plan.telemetry);
  for (const server of plan.servers) {
    if (seen.has(server.routeName)) continue;
    seen.add(server.routeName);
    if (server.l4 !== undefined) {
      chains.push(
        ...l4Chains(server, server.l4, plan.credentialsFrom, tcpLogs, tcpMetadataExchange(plan.telemetry)),
      );
      continue;
    }
    const hcm = {
      name: "envoy.filters.network.http_connection_manager",
      typed_config: {
        "@type": TYPE_URL.httpConnectionManager,
        stat_prefix: server.routeName,
        rds: { config_source: { ads: {}, resource_api_version: "V3" }, route_config_name: server.routeName },
        http_filters: [
          ...httpMetadataExchange(plan.telemetry),
          { name: FAULT_FILTER_NAME, typed_config: { "@type": TYPE_URL.fault } },
          { name: ROUTER_FILTER_NAME, typed_config: { "@type": TYPE_URL.router } },
        ],
        use_remote_address: { value: true },
        ...(httpLogs.length > 0 ? { access_log: httpLogs } : {}),
        ...connectionManagerTracing(plan.telemetry),
      },
    };
    if (server.tls === undefined) {
      chains.push({ name: server.routeName, filters: [hcm] });
      continue;
    }
    const names = server.hosts.filter((h) => h !== "*");
    chains.push({
      name: server.routeName,
      ...(names.length > 0 ? { filter_chain_match: { server_names: names } } : {}),
      transport_socket: terminatingTls(server.tls, plan.credentialsFrom, ["h2", "http/1.1"]),
      filters: [hcm],
    });
  }
  // SNI is read for terminated TLS and for passthrough alike.
  const tls = plan.servers.some((s) => s.tls !== undefined || (s.l4 !== undefined && s.l4.mode !== "tcp"));
  return {
    name: `${plan.bind}_${plan.port}`,
    address: { socket_address: { address: plan.bind, port_value: plan.port } },
    traffic_direction: "OUTBOUND",
    ...(tls
      ? {
        listener_filters: [{
          name: "envoy.filters.listener.tls_inspector",
          typed_config: { "@type": TYPE_URL.tlsInspector },
        }],
      }
      : {}),
    filter_chains: chains,
    ...listenerAccessLog(plan.telemetry),
  };
}

/** The route configuration `name` of a gateway from its virtual hosts; `defaultTimeout` as in `envoyRoute`. */
export function gatewayRouteConfig(
  name: string,
  port: number,
  hosts: readonly GatewayVirtualHost[],
  defaultTimeout?: DurationObject,
): EnvoyObject {
  return {
    name,
    virtual_hosts: hosts.map((h) => ({
      name: `${h.host}:${port}`,
      domains: [h.host, `${h.host}:${port}`],
      routes: h.routes.map((r) => envoyRoute(r, h.spec, defaultTimeout)),
      ...(h.httpsRedirect ? { require_tls: "ALL" } : {}),
    })),
    validate_clusters: { value: false },
  };
}
