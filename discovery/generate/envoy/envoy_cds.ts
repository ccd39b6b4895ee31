/**
 * CDS for Envoy sidecars and gateways: for every service port the proxy can see, the cluster of the whole
 * service and one per DestinationRule subset (`outbound|<port>|<subset>|<host>`); `inbound|<port>||` for the
 * ports of the proxy's own workload; and the two catch-alls `BlackHoleCluster` and `PassthroughCluster` that
 * the outbound listener falls back to (by the mesh's outbound traffic policy).
 *
 * Discovery by resolution: mesh services are EDS clusters fed over ADS, DNS services STRICT_DNS clusters over
 * their endpoints' addresses (or the host itself), passthrough services ORIGINAL_DST. Load balancing, circuit
 * breakers, outlier detection, connection options and TLS come from the merged DestinationRule policy.
 *
 * Not generated yet: locality-weighted and failover load balancing (`localityLbSetting`), the DestinationRule
 * `credentialName` for sidecars, and Sidecar ingress listeners' clusters.
 *
 * @module
 */
import { SPIFFE_PREFIX } from "@mesh/shared/pki/spiffe_id";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { selectorMatches } from "../../model/labels.ts";
import { planGatewayListeners } from "./gateway_plan.ts";
import { usesLocalityWeights } from "./locality_lb.ts";
import { sidecarIngressPorts } from "./sidecar_ingress.ts";
import { jwksTarget, jwtRulesFor } from "./jwt_authn.ts";
import type { Proxy } from "../../model/proxy.ts";
import type { Service, ServicePort } from "../../model/service.ts";
import type { PushContext } from "../../push/push_context.ts";
import { configKey, serviceKey } from "../../push/push_request.ts";
import { outboundClusterName } from "../../push/service_index.ts";
import { cacheKey, type GeneratedResource, type GenerateRequest, type XdsGenerator } from "../generator.ts";
import { clusterLbFields } from "../cluster_lb.ts";
import { circuitBreakers, connectTimeout, outlierDetectionFields } from "../cluster_settings.ts";
import { stableJson } from "../fingerprint.ts";
import { localityOf } from "../locality_endpoints.ts";
import type { EnvoyObject } from "../route_match.ts";
import { type ClusterPolicy, mergeTrafficPolicy } from "../traffic_policy_merge.ts";
import { connectionFields } from "./cluster_protocol.ts";
import { protocolFilterFor } from "./protocol_filters.ts";
import { meshSni, upstreamTlsFields, type UpstreamTlsPlan, upstreamTlsPlan } from "./upstream_tls.ts";
import { derivedTable } from "../../push/derived_memo.ts";
import { metadataCertFiles, withMetadataCerts } from "./metadata_certs.ts";
import { durationFromNanos, type DurationObject } from "../envoy_duration.ts";
import { gatewayDestinationHosts } from "./gateway_destinations.ts";
import { cdsUnaffectedBy } from "./unaffected_kinds.ts";
import { envoySidecarShape } from "./envoy_shape.ts";

/** A cluster plan with the config keys it depends on, and for an outbound cluster its service's host. */
type Planned = { plan: EnvoyClusterPlan; dependsOn: string[]; host?: string };

/** Drops connections to destinations the mesh does not know (REGISTRY_ONLY). */
export const BLACK_HOLE_CLUSTER = "BlackHoleCluster";
/** Forwards to the original destination of connections to unknown destinations (ALLOW_ANY). */
export const PASSTHROUGH_CLUSTER = "PassthroughCluster";

/** An endpoint a DNS or static cluster lists itself. */
export interface StaticEndpoint {
  /** IP address or DNS name. */
  readonly address: string;
  /** Port. */
  readonly port: number;
  /** `region/zone/subzone`, possibly empty. */
  readonly locality: string;
  /** Load-balancing weight, at least 1. */
  readonly weight: number;
  /** A Unix socket instead of `address:port` (a Sidecar ingress `unix://` endpoint). */
  readonly pipe?: string;
}

/** The resolved inputs of one cluster; its stable JSON is the cache key. */
export interface EnvoyClusterPlan {
  /** Cluster name. */
  readonly name: string;
  /** How the cluster finds its endpoints. */
  readonly discovery: "EDS" | "STRICT_DNS" | "ORIGINAL_DST" | "STATIC";
  /** The port's protocol (selects HTTP/2 upstreams). */
  readonly protocol: ServicePort["protocol"];
  /** The merged DestinationRule policy; absent when no rule applies. */
  readonly policy?: ClusterPolicy;
  /** Upstream TLS. */
  readonly tls: UpstreamTlsPlan;
  /** Endpoints of STRICT_DNS and STATIC clusters. */
  readonly endpoints?: readonly StaticEndpoint[];
  /** The EDS resource of an EDS cluster, when not the cluster's own name (SNI-DNAT clones share one). */
  readonly edsServiceName?: string;
  /** A locality `distribute` rule is in force: locality weights must count (EDS sets them per proxy). */
  readonly localityWeighted?: boolean;
  /** A Redis port under `DISCOVERY_ENABLE_REDIS_FILTER`: Maglev, whatever the DestinationRule says. */
  readonly maglev?: boolean;
  /** `initial_fetch_timeout` of an EDS cluster's config source (`DISCOVERY_INITIAL_FETCH_TIMEOUT`), when set. */
  readonly initialFetchTimeout?: DurationObject;
}

function loadAssignment(name: string, endpoints: readonly StaticEndpoint[]): EnvoyObject {
  const byLocality = new Map<string, StaticEndpoint[]>();
  for (const e of endpoints) byLocality.set(e.locality, [...(byLocality.get(e.locality) ?? []), e]);
  return {
    cluster_name: name,
    endpoints: [...byLocality.keys()].sort().map((locality) => ({
      locality: localityOf(locality),
      lb_endpoints: byLocality.get(locality)!.map((e) => ({
        endpoint: {
          address: e.pipe !== undefined
            ? { pipe: { path: e.pipe } }
            : { socket_address: { address: e.address, port_value: e.port } },
        },
        load_balancing_weight: { value: e.weight },
      })),
    })),
  };
}

/** The Cluster of a plan. */
export function envoyCluster(plan: EnvoyClusterPlan): EnvoyObject {
  const { policy } = plan;
  const discovery: EnvoyObject = {
    EDS: {
      type: "EDS",
      eds_cluster_config: {
        eds_config: {
          ads: {},
          resource_api_version: "V3",
          ...(plan.initialFetchTimeout ? { initial_fetch_timeout: plan.initialFetchTimeout } : {}),
        },
        service_name: plan.edsServiceName ?? plan.name,
      },
    },
    STRICT_DNS: {
      type: "STRICT_DNS",
      dns_lookup_family: "V4_ONLY",
      respect_dns_ttl: true,
      load_assignment: loadAssignment(plan.name, plan.endpoints ?? []),
    },
    ORIGINAL_DST: { type: "ORIGINAL_DST", lb_policy: "CLUSTER_PROVIDED" },
    STATIC: {
      type: "STATIC",
      ...(plan.endpoints === undefined ? {} : { load_assignment: loadAssignment(plan.name, plan.endpoints) }),
    },
  }[plan.discovery] as EnvoyObject;
  // ORIGINAL_DST clusters pick the host themselves: a load balancer setting would make Envoy reject them.
  const lb = plan.discovery === "ORIGINAL_DST"
    ? {}
    : plan.maglev
    ? { lb_policy: "MAGLEV" }
    : clusterLbFields(policy?.loadBalancer);
  // Policies given as `load_balancing_policy` weigh localities already (wrr_locality); hashing ones cannot.
  const localityWeighted = plan.localityWeighted === true && lb.load_balancing_policy === undefined &&
    lb.lb_policy !== "RING_HASH" && lb.lb_policy !== "MAGLEV";
  const outlier = outlierDetectionFields(policy?.outlierDetection);
  const commonLb = {
    ...(outlier.common_lb_config as EnvoyObject | undefined),
    ...(localityWeighted ? { locality_weighted_lb_config: {} } : {}),
  };
  return {
    name: plan.name,
    ...discovery,
    connect_timeout: connectTimeout(policy?.connectionPool),
    ...lb,
    circuit_breakers: circuitBreakers(policy?.connectionPool),
    ...outlier,
    ...(Object.keys(commonLb).length > 0 ? { common_lb_config: commonLb } : {}),
    ...connectionFields(plan.protocol, policy?.connectionPool),
    ...upstreamTlsFields(plan.tls),
  };
}

/**
 * The identity an endpoint must present: its service account when that is a SPIFFE id, else the reference's
 * `spiffe://<trust domain>/ns/<namespace>/sa/<service account>`, formed unchecked as Istio 1.9 forms it. A
 * WorkloadEntry's service account is free text there; one no SPIFFE id can carry (`a/b`, a space) gives an
 * identity no peer has, so TLS to the endpoint fails closed, where leaving it out could leave no SAN check at all.
 */
function endpointIdentity(trustDomain: string, namespace: string, serviceAccount: string): string {
  if (serviceAccount.startsWith(SPIFFE_PREFIX)) return serviceAccount;
  return `${SPIFFE_PREFIX}${trustDomain}/ns/${namespace}/sa/${serviceAccount}`;
}

/** The SPIFFE identities a service's workloads run as: declared SANs, then endpoints' service accounts. */
function serviceIdentities(push: PushContext, service: Service, trustDomain: string): string[] {
  const ids = new Set(service.serviceAccounts);
  const shards = push.endpointIndex.shards(service.hostname, service.namespace);
  for (const instances of shards.byCluster.values()) {
    for (const { endpoint } of instances) {
      if (endpoint.serviceAccount !== "") {
        ids.add(
          endpointIdentity(trustDomain, endpoint.namespace || service.namespace, endpoint.serviceAccount),
        );
      }
    }
  }
  return [...ids].sort();
}

/** Endpoints of a DNS cluster: its instances for the port (and subset), else the host itself. */
function dnsEndpoints(
  push: PushContext,
  service: Service,
  port: number,
  subsetLabels: Readonly<Record<string, string>> | undefined,
): StaticEndpoint[] {
  const out: StaticEndpoint[] = [];
  const seen = new Set<string>();
  const shards = push.endpointIndex.shards(service.hostname, service.namespace);
  for (const instances of shards.byCluster.values()) {
    for (const { servicePort, endpoint } of instances) {
      if (servicePort.port !== port || endpoint.address.startsWith("unix://")) continue;
      if (!selectorMatches(subsetLabels, endpoint.labels)) continue;
      const key = `${endpoint.address}:${endpoint.endpointPort}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({
        address: endpoint.address,
        port: endpoint.endpointPort,
        locality: endpoint.locality.label,
        weight: endpoint.weight > 0 ? endpoint.weight : 1,
      });
    }
  }
  out.sort((a, b) => a.address === b.address ? a.port - b.port : a.address < b.address ? -1 : 1);
  if (out.length === 0 && !service.hostname.startsWith("*")) {
    out.push({ address: service.hostname, port, locality: "", weight: 1 });
  }
  return out;
}

function outboundPlans(proxy: Proxy, push: PushContext, service: Service): Planned[] {
  const rule = push.destinationRule(proxy, service);
  const dependsOn = [serviceKey(service.namespace, service.hostname)];
  for (const source of rule?.sources ?? []) {
    dependsOn.push(configKey("DestinationRule", source.meta.namespace, source.meta.name));
  }
  const identities = serviceIdentities(push, service, push.mesh.trustDomain);
  const subsets = [{ name: "", labels: undefined, trafficPolicy: undefined }, ...(rule?.spec.subsets ?? [])];
  const out: Planned[] = [];
  for (const port of service.ports) {
    for (const subset of subsets) {
      const name = outboundClusterName(service.hostname, port.port, subset.name);
      const policy = mergeTrafficPolicy(rule?.spec.trafficPolicy, subset.trafficPolicy, port.port);
      const tls = upstreamTlsPlan(policy?.tls, {
        autoMtls: push.mesh.enableAutoMtls,
        meshExternal: service.meshExternal,
        sni: meshSni(service.hostname, port.port, subset.name),
        identities,
        peerExchange: push.tcpMetadataExchange,
      });
      const subsetLabels = subset.name === "" ? undefined : subset.labels ?? {};
      const discovery = service.resolution === "ClientSideLB"
        ? "EDS"
        : service.resolution === "DNSLB"
        ? "STRICT_DNS"
        : "ORIGINAL_DST";
      const localityWeighted = discovery === "EDS" &&
        usesLocalityWeights(policy?.loadBalancer?.localityLbSetting ?? push.mesh.localityLbSetting);
      const maglev = discovery !== "ORIGINAL_DST" &&
        protocolFilterFor(port.protocol, push.protocolFilters) === "redis";
      const plan: EnvoyClusterPlan = {
        name,
        discovery,
        protocol: port.protocol,
        ...(localityWeighted ? { localityWeighted } : {}),
        ...(maglev ? { maglev } : {}),
        ...(discovery === "EDS" && push.initialFetchTimeoutNs !== undefined
          ? { initialFetchTimeout: durationFromNanos(push.initialFetchTimeoutNs) }
          : {}),
        ...(policy ? { policy } : {}),
        tls,
        ...(discovery === "STRICT_DNS"
          ? { endpoints: dnsEndpoints(push, service, port.port, subsetLabels) }
          : {}),
      };
      out.push({ plan, dependsOn, host: service.hostname });
    }
  }
  return out;
}

/** `inbound|<port>||` clusters for the service ports whose endpoints are this proxy's own addresses. */
function inboundPlans(proxy: Proxy, push: PushContext): { plan: EnvoyClusterPlan; dependsOn: string[] }[] {
  if (proxy.type !== "sidecar") return [];
  const declared = sidecarIngressPorts(proxy, push);
  if (declared !== undefined) {
    const sidecar = push.sidecarScope(proxy).sidecar;
    const dependsOn = sidecar ? [configKey("Sidecar", sidecar.meta.namespace, sidecar.meta.name)] : [];
    return declared.map(({ port, protocol, endpoint }) => ({
      plan: {
        name: `inbound|${port}||`,
        discovery: "STATIC" as const,
        protocol,
        tls: { kind: "none" as const },
        endpoints: [
          "pipe" in endpoint
            ? { address: "", port: 0, pipe: endpoint.pipe, locality: "", weight: 1 }
            : { address: endpoint.address, port: endpoint.port, locality: "", weight: 1 },
        ],
      },
      dependsOn,
    }));
  }
  if (proxy.ipAddresses.length === 0) return [];
  const byPort = new Map<number, { plan: EnvoyClusterPlan; dependsOn: string[] }>();
  for (const { service, servicePort, endpoint } of push.endpointIndex.instancesAt(proxy.ipAddresses)) {
    if (byPort.has(endpoint.endpointPort)) continue;
    const name = `inbound|${endpoint.endpointPort}||`;
    byPort.set(endpoint.endpointPort, {
      plan: {
        name,
        discovery: "STATIC",
        protocol: servicePort.protocol,
        tls: { kind: "none" },
        endpoints: [{ address: "127.0.0.1", port: endpoint.endpointPort, locality: "", weight: 1 }],
      },
      dependsOn: [serviceKey(service.namespace, service.hostname)],
    });
  }
  return [...byPort.keys()].sort((a, b) => a - b).map((port) => byPort.get(port)!);
}

/**
 * Each plan's resource (name, cache key, builder), made once per plan. Outbound plans are shared by every
 * sidecar of a namespace and scope, and a key holds the plan's canonical JSON: made per proxy, that JSON and
 * hashing it in the cache were a third of a full-view Envoy push. A plan is never changed once planned.
 */
const PLANNED_RESOURCES = derivedTable<Planned, undefined, GeneratedResource>("cds.plannedResources");

function resourceOf(push: PushContext, entry: Planned): GeneratedResource {
  return push.derived.get(PLANNED_RESOURCES, entry, undefined, () => {
    const { plan, dependsOn } = entry;
    return {
      name: plan.name,
      key: cacheKey(TYPE_URL.cluster, [stableJson(plan)], dependsOn),
      build: () => envoyCluster(plan),
    };
  });
}

/** Outbound plans by what they read of a proxy, then by endpoint generation. */
const OUTBOUND_PLANS = derivedTable<PushContext, string, Map<number, Planned[]>>("cds.outboundPlans");

/**
 * The outbound cluster plans of `proxy`, planned once per snapshot, endpoint generation and the parts of a
 * proxy they read (its namespace, for DestinationRule precedence, and its Sidecar scope): every sidecar of one
 * namespace and scope shares them, and so do the sidecars of every namespace that sees the snapshot alike
 * (`PushContext.namespaceView`: no Sidecar, no DestinationRule or export that singles it out).
 */
function sharedOutboundPlans(proxy: Proxy, push: PushContext): Planned[] {
  const scope = push.sidecarScope(proxy);
  const key = push.namespaceView(proxy.namespace) === ""
    ? ""
    : `${proxy.namespace}\u0000${scope.name}\u0000${scope.namespace}`;
  const generation = push.endpointIndex.generation;
  // Only the latest endpoint generation is kept.
  const byGeneration = push.derived.get(
    OUTBOUND_PLANS,
    push.configSnapshot,
    key,
    () => new Map<number, Planned[]>(),
  );
  const hit = byGeneration.get(generation);
  if (hit !== undefined) return hit;
  const plans = push.servicesVisibleTo(proxy).flatMap((service) => outboundPlans(proxy, push, service));
  byGeneration.clear();
  byGeneration.set(generation, plans);
  return plans;
}

/**
 * The outbound plans a proxy gets: all of them, except that under `DISCOVERY_FILTER_GATEWAY_CLUSTER_CONFIG` a
 * gateway gets only those of the hosts its bound VirtualServices route or mirror to (none when no Gateway
 * selects it). The SNI-DNAT clones stay unfiltered, as the reference builds them from every service.
 */
function gatewayOutbound(proxy: Proxy, push: PushContext, outbound: readonly Planned[]): readonly Planned[] {
  if (proxy.type !== "router" || !push.filterGatewayClusters) return outbound;
  // Which plans are kept is decided at every generation, so a cluster's content (its cache key) does not
  // depend on the VirtualServices that select it.
  const hosts = gatewayDestinationHosts(proxy, push);
  return outbound.filter((entry) => entry.host !== undefined && hosts.has(entry.host));
}

/**
 * For a gateway with an AUTO_PASSTHROUGH server: a clone of each EDS outbound cluster named as the SNI a mesh
 * client sends (`outbound_.<port>_.<subset>_.<host>`), sharing its endpoints, without TLS of its own (the
 * client's mTLS passes through to the workload).
 */
function sniDnatPlans(
  proxy: Proxy,
  push: PushContext,
  outbound: readonly { plan: EnvoyClusterPlan; dependsOn: string[] }[],
): { plan: EnvoyClusterPlan; dependsOn: string[] }[] {
  if (proxy.type !== "router") return [];
  const { plans, dependsOn } = planGatewayListeners(proxy, push);
  if (!plans.some((p) => p.servers.some((s) => s.l4?.mode === "auto"))) return [];
  return outbound.filter(({ plan }) => plan.discovery === "EDS").map(({ plan, dependsOn: own }) => {
    const [, port, subset, host] = plan.name.split("|");
    return {
      plan: {
        ...plan,
        name: `outbound_.${port}_.${subset}_.${host}`,
        edsServiceName: plan.name,
        tls: { kind: "none" as const },
      },
      dependsOn: [...own, ...dependsOn],
    };
  });
}

/** The system roots a proxy image carries, for verifying JWKS servers (public web PKI). */
const SYSTEM_ROOTS = "/etc/ssl/certs/ca-certificates.crt";

/** One cluster per `jwksUri` host of the RequestAuthentications selecting a sidecar, by DNS, over TLS for https. */
function jwksPlans(proxy: Proxy, push: PushContext): { plan: EnvoyClusterPlan; dependsOn: string[] }[] {
  if (proxy.type !== "sidecar") return [];
  const { rules, dependsOn } = jwtRulesFor(proxy, push);
  const byName = new Map<string, { plan: EnvoyClusterPlan; dependsOn: string[] }>();
  for (const rule of rules) {
    if (rule.jwks || !rule.jwksUri) continue;
    const target = jwksTarget(rule.jwksUri);
    if (target === undefined || byName.has(target.cluster)) continue;
    byName.set(target.cluster, {
      plan: {
        name: target.cluster,
        discovery: "STRICT_DNS",
        protocol: "HTTP",
        tls: target.tls
          ? { kind: "files", settings: { mode: "SIMPLE", caCertificates: SYSTEM_ROOTS }, sni: target.host }
          : { kind: "none" },
        endpoints: [{ address: target.host, port: target.port, locality: "", weight: 1 }],
      },
      dependsOn,
    });
  }
  return [...byName.values()];
}

function catchAllPlans(): { plan: EnvoyClusterPlan; dependsOn: string[] }[] {
  return [
    {
      plan: { name: BLACK_HOLE_CLUSTER, discovery: "STATIC", protocol: "TCP", tls: { kind: "none" } },
      dependsOn: [],
    },
    {
      plan: { name: PASSTHROUGH_CLUSTER, discovery: "ORIGINAL_DST", protocol: "TCP", tls: { kind: "none" } },
      dependsOn: [],
    },
  ];
}

/**
 * The shared outbound plans with `DISCOVERY_ALLOW_METADATA_CERTS_DR_MUTUAL_TLS` applied: a proxy whose metadata
 * names certificate files gets its own copies of the `MUTUAL` plans (their files are in their cache keys).
 */
function ownCertificates(proxy: Proxy, push: PushContext, outbound: Planned[]): Planned[] {
  const files = push.allowMetadataCerts ? metadataCertFiles(proxy) : undefined;
  if (files === undefined) return outbound;
  return outbound.map((entry) => {
    const tls = withMetadataCerts(entry.plan.tls, files);
    return tls === entry.plan.tls ? entry : { ...entry, plan: { ...entry.plan, tls } };
  });
}

/**
 * Builds the clusters of an Envoy sidecar or gateway. Reads the proxy's type, addresses and service scope,
 * the DestinationRule of each service, the mesh's automatic-mTLS switch and trust domain, and for DNS services
 * and identities the services' endpoints; every one is in the plan, which is the cache key.
 */
export const envoyCdsGenerator: XdsGenerator<PushContext> = {
  typeUrl: TYPE_URL.cluster,
  unaffectedBy: cdsUnaffectedBy,
  shapeOf: (proxy, push) =>
    envoySidecarShape(
      proxy,
      push,
      () => `${stableJson(inboundPlans(proxy, push))}|${jwtRulesFor(proxy, push).dependsOn.join("\u0000")}`,
    ),
  generate(proxy: Proxy, push: PushContext, request: GenerateRequest): GeneratedResource[] {
    const outbound = ownCertificates(proxy, push, sharedOutboundPlans(proxy, push));
    const plans = [
      ...gatewayOutbound(proxy, push, outbound),
      ...sniDnatPlans(proxy, push, outbound),
      ...jwksPlans(proxy, push),
      ...inboundPlans(proxy, push),
      ...catchAllPlans(),
    ];
    const wanted = request.names.length === 0 ? undefined : new Set(request.names);
    return plans.filter(({ plan }) => wanted === undefined || wanted.has(plan.name)).map((entry) =>
      resourceOf(push, entry)
    );
  },
};
