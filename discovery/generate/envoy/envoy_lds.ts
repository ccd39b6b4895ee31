/**
 * LDS for Envoy sidecars. Traffic capture sends every outbound connection to `virtualOutbound` (15001) and
 * every inbound one to `virtualInbound` (15006); Envoy then hands each connection to the listener of its
 * original destination (`use_original_dst`):
 *
 * - `0.0.0.0_<port>` for each outbound HTTP port: an HttpConnectionManager whose routes come over RDS under
 *   the port's name;
 * - `<address>_<port>` (or `0.0.0.0_<port>` for a service without an address) for other ports: a TCP proxy to
 *   the service's cluster;
 * - otherwise the outbound catch-all to PassthroughCluster or BlackHoleCluster by the outbound traffic policy.
 *
 * Inbound, each port of the proxy's own workload has, by its PeerAuthentication mode, a mesh mTLS chain (TLS with
 * the mesh's ALPN, terminated with the workload certificate from SDS and client certificates checked against
 * ROOTCA) and/or a plaintext chain: both for PERMISSIVE (the default), mTLS only for STRICT, plaintext only for
 * DISABLE.
 *
 * Not generated yet: Sidecar ingress/egress listener ports, protocol
 * sniffing for undeclared protocols, and the 127.0.0.6 bind of Istio's inbound passthrough cluster.
 *
 * @module
 */
import { TYPE_URL } from "@mesh/proto/type_urls";
import type { ServiceInstance } from "../../model/endpoint.ts";
import type { Proxy } from "../../model/proxy.ts";
import { addressesInCluster } from "../../model/service.ts";
import type { OutboundHttpOptions, PushContext } from "../../push/push_context.ts";
import { configKey, serviceKey } from "../../push/push_request.ts";
import type { ConflictSink } from "../../push/listener_conflicts.ts";
import { outboundClusterName } from "../../push/service_index.ts";
import { cacheKey, type GeneratedResource, type GenerateRequest, type XdsGenerator } from "../generator.ts";
import { stableJson } from "../fingerprint.ts";
import { derivedTable } from "../../push/derived_memo.ts";
import { durationFromNanos } from "../envoy_duration.ts";
import { FAULT_FILTER_NAME, ROUTER_FILTER_NAME, type WeightedCluster } from "../route_action.ts";
import { planMeshL4Routes, type PlannedL4Routes } from "../route_plan.ts";
import { tcpProxy, tcpProxyTo } from "./tcp_proxy.ts";
import type { EnvoyObject } from "../route_match.ts";
import { BLACK_HOLE_CLUSTER, PASSTHROUGH_CLUSTER } from "./envoy_cds.ts";
import { isHttpPort, isSniffedPort, outboundHttpPorts } from "./envoy_rds.ts";
import { ROOT_SECRET_NAME, sdsSecretConfig, WORKLOAD_SECRET_NAME } from "./sds_config.ts";
import { meshAlpn } from "./upstream_tls.ts";
import { headlessListenerAddresses, headlessOwnAddress } from "./headless_listeners.ts";
import { planGatewayListeners } from "./gateway_plan.ts";
import { type InboundMtlsMode, inboundMtlsMode, peerAuthenticationsFor } from "./inbound_mtls.ts";
import { gatewayListener } from "./gateway_resources.ts";
import { authorizationPoliciesFor, type AuthzFilters, authzFilters } from "./authz_rbac.ts";
import { sidecarIngressPorts } from "./sidecar_ingress.ts";
import { egressServicesForPort, hasPortBoundEgress } from "./egress_ports.ts";
import { jwtAuthnFilter, jwtRulesFor } from "./jwt_authn.ts";
import { type ProtocolFilter, protocolFilterFor, protocolFilterStack } from "./protocol_filters.ts";
import {
  connectionManagerTracing,
  httpAccessLogs,
  httpMetadataExchange,
  listenerAccessLog,
  type ListenerTelemetry,
  listenerTelemetry,
  tcpAccessLogs,
  tcpMetadataExchange,
} from "./telemetry.ts";
import { ldsUnaffectedBy } from "./unaffected_kinds.ts";
import { envoySidecarShape } from "./envoy_shape.ts";

/** The port traffic capture redirects outbound connections to (mesh-agent `-p`). */
export const VIRTUAL_OUTBOUND_PORT = 15001;
/** The port traffic capture redirects inbound connections to (mesh-agent `-z`). */
export const VIRTUAL_INBOUND_PORT = 15006;

/** One listener to build; its stable JSON is the cache key. */
export type ListenerPlan =
  & (
    | { readonly kind: "virtualOutbound"; readonly fallback: string }
    | {
      readonly kind: "virtualInbound";
      /** `sniff`: the port's protocol is undeclared, HTTP is detected on it. */
      readonly ports: readonly {
        port: number;
        http: boolean;
        sniff?: boolean;
        mtls: InboundMtlsMode;
        filter?: ProtocolFilter;
      }[];
      /** How long the listener waits to tell HTTP from TCP on sniffed ports, ms. */
      readonly detectionTimeoutMs?: number;
      /** RBAC filters from the AuthorizationPolicies selecting the workload; absent when none does. */
      readonly authz?: AuthzFilters;
      /** The JWT filter from the RequestAuthentications selecting the workload; absent when none does. */
      readonly jwt?: EnvoyObject;
      /** `DISCOVERY_SIDECAR_ENABLE_INBOUND_TLS_V2`: mesh mTLS accepts TLS 1.2 and up with strong ciphers only. */
      readonly tlsV2?: boolean;
      /** `DISCOVERY_ENABLE_TCP_METADATA_EXCHANGE=false`: mesh mTLS chains match `istio` without `istio-peer-exchange`. */
      readonly withoutPeerExchange?: boolean;
    }
    | {
      readonly kind: "http";
      readonly name: string;
      readonly port: number;
      /** `DISCOVERY_HTTP10` and `DISCOVERY_SIDECAR_USE_REMOTE_ADDRESS`. */
      readonly outbound: OutboundHttpOptions;
    }
    | {
      readonly kind: "tcp";
      readonly name: string;
      readonly address: string;
      readonly port: number;
      /** Where connections go: the VirtualService's first applying TCP route, else the service's cluster. */
      readonly clusters: readonly WeightedCluster[];
      /** TLS routes of the VirtualService: connections whose SNI names one of their hosts go there instead. */
      readonly sni: PlannedL4Routes["tls"];
      /** The port's protocol is undeclared and sniffed: HTTP goes through the port's route configuration. */
      readonly sniffHttp: boolean;
      /** How long the listener waits for the first bytes to tell HTTP from TCP (mesh `protocolDetectionTimeout`), ms. */
      readonly detectionTimeoutMs: number;
      /** Settings of the HTTP chain of a sniffed port. */
      readonly outbound: OutboundHttpOptions;
      /** The protocol-aware filter of the port's plain (non-SNI) chain, when its switch is on. */
      readonly filter?: ProtocolFilter;
    }
  )
  & {
    /** Access logs and tracing of the listener's filters; absent: none. */
    readonly telemetry?: ListenerTelemetry;
  };

function socketAddress(address: string, port: number): EnvoyObject {
  return { socket_address: { address, port_value: port } };
}

const HTTP_FILTERS = [
  { name: FAULT_FILTER_NAME, typed_config: { "@type": TYPE_URL.fault } },
  { name: ROUTER_FILTER_NAME, typed_config: { "@type": TYPE_URL.router } },
];

function httpConnectionManager(
  statPrefix: string,
  routes: EnvoyObject,
  before: readonly EnvoyObject[] = [],
  outbound?: OutboundHttpOptions,
  telemetry?: ListenerTelemetry,
): EnvoyObject {
  const accessLog = httpAccessLogs(telemetry);
  return {
    name: "envoy.filters.network.http_connection_manager",
    typed_config: {
      "@type": TYPE_URL.httpConnectionManager,
      stat_prefix: statPrefix,
      ...routes,
      http_filters: [...before, ...httpMetadataExchange(telemetry), ...HTTP_FILTERS],
      use_remote_address: { value: outbound?.useRemoteAddress ?? false },
      ...(outbound?.http10 ? { http_protocol_options: { accept_http_10: true } } : {}),
      normalize_path: { value: true },
      ...(accessLog.length > 0 ? { access_log: accessLog } : {}),
      ...connectionManagerTracing(telemetry),
    },
  };
}

const TLS_INSPECTOR = {
  name: "envoy.filters.listener.tls_inspector",
  typed_config: { "@type": TYPE_URL.tlsInspector },
};
const HTTP_INSPECTOR = {
  name: "envoy.filters.listener.http_inspector",
  typed_config: { "@type": TYPE_URL.httpInspector },
};
/** What the HTTP inspector reports for plaintext HTTP: the chains that take it. */
const SNIFFED_HTTP = ["http/1.0", "http/1.1", "h2c"];
/** The ALPN a mesh client offers when it carries HTTP inside mesh mTLS. */
const MESH_HTTP_ALPN = ["istio-http/1.0", "istio-http/1.1", "istio-h2"];

/** Listener filters get this long to tell the protocol; without a verdict the connection goes on as TCP. */
function detectionTimeout(ms: number): EnvoyObject {
  return {
    listener_filters_timeout: durationFromNanos(BigInt(Math.round(ms)) * 1_000_000n),
    continue_on_listener_filters_timeout: true,
  };
}

function rdsFor(port: number): EnvoyObject {
  return { rds: { config_source: { ads: {}, resource_api_version: "V3" }, route_config_name: String(port) } };
}

function inboundFilters(
  port: number,
  http: boolean,
  authz: AuthzFilters | undefined,
  jwt: EnvoyObject | undefined,
  filter: ProtocolFilter | undefined,
  telemetry: ListenerTelemetry | undefined,
): EnvoyObject[] {
  const cluster = `inbound|${port}||`;
  if (!http) {
    return [
      ...(authz?.tcp ?? []),
      ...tcpMetadataExchange(telemetry),
      ...protocolFilterStack(filter, cluster, cluster, tcpProxyTo(cluster, tcpAccessLogs(telemetry))),
    ];
  }
  return [httpConnectionManager(
    cluster,
    {
      route_config: {
        name: cluster,
        virtual_hosts: [{
          name: `inbound|http|${port}`,
          domains: ["*"],
          routes: [{
            name: "default",
            match: { prefix: "/" },
            route: { cluster, timeout: { seconds: "0" } },
          }],
        }],
        validate_clusters: { value: false },
      },
    },
    [...(jwt ? [jwt] : []), ...(authz?.http ?? [])],
    undefined,
    telemetry,
  )];
}

/** The reference's strong ciphers for sidecars' inbound TLS (`DISCOVERY_SIDECAR_ENABLE_INBOUND_TLS_V2`). */
export const INBOUND_TLS_V2_CIPHERS: readonly string[] = [
  "ECDHE-ECDSA-AES256-GCM-SHA384",
  "ECDHE-RSA-AES256-GCM-SHA384",
  "ECDHE-ECDSA-AES128-GCM-SHA256",
  "ECDHE-RSA-AES128-GCM-SHA256",
  "AES256-GCM-SHA384",
  "AES128-GCM-SHA256",
];

function meshServerTls(tlsV2: boolean): EnvoyObject {
  return {
    name: "envoy.transport_sockets.tls",
    typed_config: {
      "@type": TYPE_URL.downstreamTlsContext,
      require_client_certificate: { value: true },
      common_tls_context: {
        tls_certificate_sds_secret_configs: [sdsSecretConfig(WORKLOAD_SECRET_NAME)],
        combined_validation_context: {
          default_validation_context: {},
          validation_context_sds_secret_config: sdsSecretConfig(ROOT_SECRET_NAME),
        },
        alpn_protocols: ["h2", "http/1.1"],
        ...(tlsV2
          ? {
            tls_params: {
              tls_minimum_protocol_version: "TLSv1_2",
              cipher_suites: [...INBOUND_TLS_V2_CIPHERS],
            },
          }
          : {}),
      },
    },
  };
}

/** The Listener of a plan. */
export function envoyListener(plan: ListenerPlan): EnvoyObject {
  return { ...listenerOf(plan), ...listenerAccessLog(plan.telemetry) };
}

function listenerOf(plan: ListenerPlan): EnvoyObject {
  const tcpLogs = tcpAccessLogs(plan.telemetry);
  switch (plan.kind) {
    case "virtualOutbound":
      return {
        name: "virtualOutbound",
        address: socketAddress("0.0.0.0", VIRTUAL_OUTBOUND_PORT),
        use_original_dst: { value: true },
        traffic_direction: "OUTBOUND",
        filter_chains: [{
          name: "virtualOutbound-catchall-tcp",
          filters: [tcpProxyTo(plan.fallback, tcpLogs)],
        }],
      };
    case "virtualInbound":
      return {
        name: "virtualInbound",
        address: socketAddress("0.0.0.0", VIRTUAL_INBOUND_PORT),
        traffic_direction: "INBOUND",
        listener_filters: [
          { name: "envoy.filters.listener.original_dst", typed_config: { "@type": TYPE_URL.originalDst } },
          TLS_INSPECTOR,
          ...(plan.ports.some((p) => p.sniff) ? [HTTP_INSPECTOR] : []),
        ],
        ...(plan.ports.some((p) => p.sniff) ? detectionTimeout(plan.detectionTimeoutMs ?? 1_000) : {}),
        filter_chains: [
          ...plan.ports.flatMap(({ port, http, sniff, mtls, filter }) => {
            // A sniffed port gets an HTTP variant of each chain, picked by what the client speaks: the HTTP
            // inspector's verdict in plaintext, the mesh ALPN inside mTLS; everything else is TCP.
            const variants = sniff
              ? [{ http: true, suffix: "|http" }, { http: false, suffix: "|tcp" }]
              : [{ http, suffix: "" }];
            return variants.flatMap((variant, i) => {
              const detected = sniff && i === 0;
              return [
                ...(mtls === "DISABLE" ? [] : [{
                  name: `inbound|${port}|mtls${variant.suffix}`,
                  filter_chain_match: {
                    destination_port: { value: port },
                    transport_protocol: "tls",
                    application_protocols: detected
                      ? MESH_HTTP_ALPN
                      : [...meshAlpn(!plan.withoutPeerExchange)],
                  },
                  transport_socket: meshServerTls(plan.tlsV2 === true),
                  filters: inboundFilters(port, variant.http, plan.authz, plan.jwt, filter, plan.telemetry),
                }]),
                // STRICT: no plaintext chain, so a plaintext connection to the port matches nothing and is closed.
                ...(mtls === "STRICT" ? [] : [{
                  name: `inbound|${port}|plaintext${variant.suffix}`,
                  filter_chain_match: {
                    destination_port: { value: port },
                    ...(mtls === "DISABLE" ? {} : { transport_protocol: "raw_buffer" }),
                    ...(detected ? { application_protocols: SNIFFED_HTTP } : {}),
                  },
                  filters: inboundFilters(port, variant.http, plan.authz, plan.jwt, filter, plan.telemetry),
                }]),
              ];
            });
          }),
          { name: "virtualInbound-catchall", filters: [tcpProxyTo(PASSTHROUGH_CLUSTER, tcpLogs)] },
        ],
      };
    case "http":
      return {
        name: plan.name,
        address: socketAddress("0.0.0.0", plan.port),
        bind_to_port: { value: false },
        traffic_direction: "OUTBOUND",
        filter_chains: [{
          filters: [httpConnectionManager(plan.name, rdsFor(plan.port), [], plan.outbound, plan.telemetry)],
        }],
      };
    case "tcp":
      return {
        name: plan.name,
        address: socketAddress(plan.address, plan.port),
        bind_to_port: { value: false },
        traffic_direction: "OUTBOUND",
        ...(plan.sni.length > 0 || plan.sniffHttp
          ? {
            listener_filters: [
              ...(plan.sni.length > 0 ? [TLS_INSPECTOR] : []),
              ...(plan.sniffHttp ? [HTTP_INSPECTOR] : []),
            ],
            ...(plan.sniffHttp ? detectionTimeout(plan.detectionTimeoutMs) : {}),
          }
          : {}),
        filter_chains: [
          ...(plan.sniffHttp
            ? [{
              filter_chain_match: { application_protocols: [...SNIFFED_HTTP] },
              filters: [
                httpConnectionManager(plan.name, rdsFor(plan.port), [], plan.outbound, plan.telemetry),
              ],
            }]
            : []),
          ...plan.sni.map((route) => ({
            filter_chain_match: { server_names: [...route.sniHosts] },
            filters: [tcpProxy(plan.name, route.clusters, tcpLogs)],
          })),
          {
            filters: [
              ...tcpMetadataExchange(plan.telemetry),
              ...protocolFilterStack(
                plan.filter,
                plan.clusters.length === 1 ? plan.clusters[0].name : plan.name,
                plan.clusters[0].name,
                tcpProxy(plan.name, plan.clusters, tcpLogs),
              ),
            ],
          },
        ],
      };
  }
}

/**
 * The listener plans of a proxy, with the service keys each depends on; the listener conflicts met on the way
 * go to `conflicts` (the snapshot is never written).
 */
export function planListeners(
  proxy: Proxy,
  push: PushContext,
  conflicts?: ConflictSink,
): { plan: ListenerPlan; dependsOn: string[] }[] {
  const scope = push.sidecarScope(proxy);
  const fallback = scope.outboundTrafficPolicy.mode === "REGISTRY_ONLY"
    ? BLACK_HOLE_CLUSTER
    : PASSTHROUGH_CLUSTER;
  const telemetry = listenerTelemetry(proxy, push);
  const out: { plan: ListenerPlan; dependsOn: string[] }[] = [
    { plan: { kind: "virtualOutbound", fallback, telemetry }, dependsOn: [] },
  ];
  const httpPorts = new Set(outboundHttpPorts(proxy, push));
  for (const port of httpPorts) {
    out.push({
      plan: { kind: "http", name: `0.0.0.0_${port}`, port, outbound: push.outboundHttp, telemetry },
      dependsOn: [],
    });
  }
  const taken = new Set([...httpPorts].map((p) => `0.0.0.0_${p}`));
  const services = push.servicesVisibleTo(proxy).slice()
    .sort((a, b) => a.hostname < b.hostname ? -1 : a.hostname > b.hostname ? 1 : 0);
  const portBound = hasPortBoundEgress(scope);
  const cluster = push.networks.clusterOfProxy(proxy);
  for (const service of services) {
    for (const port of service.ports) {
      if (isHttpPort(port)) continue;
      if (portBound && !egressServicesForPort(push, scope, port.port).has(service)) continue;
      // A hostname several clusters define listens on the VIP of the proxy's own cluster, as its DNS answers.
      const addresses = (addressesInCluster(service, cluster) ?? service.addresses).filter((a) =>
        a !== "0.0.0.0"
      );
      // A listener per address and port; a service without an address takes the port's wildcard listener,
      // when no HTTP port or earlier service has it (the loser is unreachable, as in Istio), or, headless,
      // one listener per endpoint IP.
      const binds = addresses.length > 0
        ? addresses
        : headlessListenerAddresses(proxy, push, service, port) ?? ["0.0.0.0"];
      for (const address of binds) {
        const name = `${address}_${port.port}`;
        if (taken.has(name)) {
          conflicts?.add(
            httpPorts.has(port.port) && address === "0.0.0.0"
              ? "discovery_conflict_outbound_listener_tcp_over_current_http"
              : "discovery_conflict_outbound_listener_tcp_over_current_tcp",
            `${name} ${service.hostname}`,
          );
          continue;
        }
        taken.add(name);
        const routes = planMeshL4Routes(service.hostname, port.port, proxy, push);
        const filter = protocolFilterFor(port.protocol, push.protocolFilters);
        out.push({
          plan: {
            kind: "tcp",
            name,
            address,
            port: port.port,
            clusters: routes.tcp[0]?.clusters ??
              [{ name: outboundClusterName(service.hostname, port.port), weight: 100 }],
            sni: routes.tls,
            sniffHttp: isSniffedPort(port, push),
            detectionTimeoutMs: Number(push.mesh.protocolDetectionTimeout / 1_000_000n),
            outbound: push.outboundHttp,
            ...(filter ? { filter } : {}),
            telemetry,
          },
          dependsOn: [serviceKey(service.namespace, service.hostname), ...routes.dependsOn],
        });
      }
    }
  }
  const { ports: inbound, dependsOn: inboundDeps } = inboundListenerPorts(proxy, push, conflicts);
  const { authn, authz, jwtRules } = securityPoliciesFor(proxy, push);
  const jwt = jwtAuthnFilter(jwtRules.rules);
  out.push({
    plan: {
      kind: "virtualInbound",
      ports: [...inbound.keys()].sort((a, b) => a - b).map((port) => ({
        port,
        http: inbound.get(port)!.http,
        ...(inbound.get(port)!.sniff ? { sniff: true } : {}),
        ...(inbound.get(port)!.filter ? { filter: inbound.get(port)!.filter } : {}),
        mtls: push.plugins.authn ? inboundMtlsMode(authn.policies, port) : "DISABLE",
      })),
      ...([...inbound.values()].some((p) => p.sniff)
        ? { detectionTimeoutMs: push.protocolSniffing.inboundTimeoutMs }
        : {}),
      ...(authz.policies.length > 0 ? { authz: authzFilters(authz.policies) } : {}),
      ...(jwt ? { jwt } : {}),
      ...(push.inboundTlsV2 ? { tlsV2: true } : {}),
      ...(push.tcpMetadataExchange ? {} : { withoutPeerExchange: true }),
      telemetry,
    },
    dependsOn: [...inboundDeps, ...authn.dependsOn, ...authz.dependsOn, ...jwtRules.dependsOn],
  });
  return out;
}

/**
 * The security policies that select a sidecar, as far as its plugins read them: without the `authn` plugin no
 * PeerAuthentication or RequestAuthentication counts (inbound ports are plaintext, with no JWT check), without
 * `authz` no AuthorizationPolicy.
 */
function securityPoliciesFor(proxy: Proxy, push: PushContext): SecurityPolicies {
  // Read by the LDS shape of every proxy on every push and again by its generation: worked out once.
  return push.derived.get(SECURITY_POLICIES, proxy, undefined, () => computeSecurityPolicies(proxy, push));
}

type SecurityPolicies = ReturnType<typeof computeSecurityPolicies>;

/** The security policies selecting a proxy, per snapshot and proxy object; read-only to every caller. */
const SECURITY_POLICIES = derivedTable<Proxy, undefined, SecurityPolicies>("securityPolicies");

function computeSecurityPolicies(proxy: Proxy, push: PushContext) {
  const none = { policies: [], dependsOn: [] };
  return {
    authn: push.plugins.authn ? peerAuthenticationsFor(proxy, push) : none,
    authz: push.plugins.authz ? authorizationPoliciesFor(proxy, push) : none,
    jwtRules: push.plugins.authn ? jwtRulesFor(proxy, push) : { rules: [], dependsOn: [] },
  };
}

/** One inbound port of a sidecar's `virtualInbound` listener, as its workload serves it. */
interface InboundPort {
  readonly http: boolean;
  readonly sniff: boolean;
  readonly filter: ProtocolFilter | undefined;
}

/**
 * The inbound ports of a sidecar (its Sidecar's ingress ports, else those of the service endpoints at its
 * addresses), by port, with the config keys they depend on; none for a gateway. A sidecar at no endpoint
 * address, or whose endpoints claim one port with two protocols, is reported to `conflicts` under its own id:
 * the LDS shape calls this for every proxy, so each is counted though proxies of a shape share one generation.
 * `atProxy` are the endpoints at the proxy's addresses when the caller has looked them up already.
 */
export function inboundListenerPorts(
  proxy: Proxy,
  push: PushContext,
  conflicts?: ConflictSink,
  atProxy?: readonly ServiceInstance[],
): { ports: Map<number, InboundPort>; dependsOn: string[] } {
  const inbound = new Map<number, InboundPort>();
  const inboundDeps: string[] = [];
  const declared = proxy.type === "sidecar" ? sidecarIngressPorts(proxy, push) : undefined;
  if (declared !== undefined) {
    // The Sidecar's ingress listeners replace the ports found from the services.
    const sidecar = push.sidecarScope(proxy).sidecar;
    if (sidecar) inboundDeps.push(configKey("Sidecar", sidecar.meta.namespace, sidecar.meta.name));
    for (const { port, protocol } of declared) {
      inbound.set(port, {
        http: isHttpPort({ port, protocol, name: "" }),
        sniff: protocol === "Unsupported" && push.protocolSniffing.inbound,
        filter: protocolFilterFor(protocol, push.protocolFilters),
      });
    }
  } else if (proxy.type === "sidecar") {
    const instances = atProxy ?? push.endpointIndex.instancesAt(proxy.ipAddresses);
    if (instances.length === 0) conflicts?.add("discovery_no_ip", proxy.id);
    for (const { service, servicePort, endpoint } of instances) {
      const held = inbound.get(endpoint.endpointPort);
      if (held !== undefined) {
        // Another service already claimed the port: a different protocol is a conflict, the first wins.
        if (held.http !== isHttpPort(servicePort)) {
          conflicts?.add(
            "discovery_conflict_inbound_listener",
            `${proxy.id} ${endpoint.endpointPort} ${service.hostname}`,
          );
        }
        continue;
      }
      inbound.set(endpoint.endpointPort, {
        http: isHttpPort(servicePort),
        sniff: servicePort.protocol === "Unsupported" && push.protocolSniffing.inbound,
        filter: protocolFilterFor(servicePort.protocol, push.protocolFilters),
      });
      inboundDeps.push(serviceKey(service.namespace, service.hostname));
    }
  }
  return { ports: inbound, dependsOn: inboundDeps };
}

/**
 * Builds the listeners of an Envoy sidecar. Reads the proxy's type, addresses and scope (services, outbound
 * policy) and the endpoints at the proxy's addresses; all of it is in the plans, which are the cache keys.
 */
export const envoyLdsGenerator: XdsGenerator<PushContext> = {
  typeUrl: TYPE_URL.listener,
  unaffectedBy: ldsUnaffectedBy,
  shapeOf: (proxy, push, request) =>
    envoySidecarShape(proxy, push, () => {
      // The endpoints at the proxy's addresses give both its inbound ports and its headless own address.
      const instances = push.endpointIndex.instancesAt(proxy.ipAddresses);
      const { ports, dependsOn } = inboundListenerPorts(proxy, push, request.conflicts, instances);
      const { authn, authz, jwtRules } = securityPoliciesFor(proxy, push);
      const policies = [authn.dependsOn, authz.dependsOn, jwtRules.dependsOn];
      // Also what LDS reads of the proxy beyond its scope: its cluster (whose VIPs its TCP listeners take),
      // its telemetry (its own ProxyConfig's tracing) and its address where headless listeners leave it out.
      return JSON.stringify([
        [...ports],
        dependsOn,
        policies,
        push.networks.clusterOfProxy(proxy),
        listenerTelemetry(proxy, push),
        headlessOwnAddress(proxy, push, instances) ?? "",
      ]);
    }),
  generate(proxy: Proxy, push: PushContext, request: GenerateRequest): GeneratedResource[] {
    const wanted = request.names.length === 0 ? undefined : new Set(request.names);
    if (proxy.type === "router") {
      const { plans, dependsOn } = planGatewayListeners(proxy, push);
      return plans
        .map((plan) => ({ plan, name: `${plan.bind}_${plan.port}` }))
        .filter(({ name }) => wanted === undefined || wanted.has(name))
        .map(({ plan, name }) => ({
          name,
          key: cacheKey(TYPE_URL.listener, ["gateway", stableJson(plan)], dependsOn),
          build: () => gatewayListener(plan),
        }));
    }
    return planListeners(proxy, push, request.conflicts)
      .filter(({ plan }) => wanted === undefined || wanted.has(listenerName(plan)))
      .map(({ plan, dependsOn }) => ({
        name: listenerName(plan),
        key: cacheKey(TYPE_URL.listener, ["envoy", stableJson(plan)], dependsOn),
        build: () => envoyListener(plan),
      }));
  },
};

/** The name of a planned listener. */
export function listenerName(plan: ListenerPlan): string {
  return plan.kind === "virtualOutbound" || plan.kind === "virtualInbound" ? plan.kind : plan.name;
}
