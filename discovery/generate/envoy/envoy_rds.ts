/**
 * RDS for Envoy sidecars: one RouteConfiguration per outbound HTTP port (named by the port, as the outbound
 * HTTP listener of that port asks for it), with a virtual host per visible service on that port answering to
 * every name a client of the proxy's namespace may use for it, routes from the VirtualService that claims the
 * service (matches, weights, retries, timeouts, rewrites, faults, consistent hashing, redirects, mirrors, CORS,
 * header manipulation) or one default route,
 * and a last `allow_any` virtual host that sends unknown hosts to PassthroughCluster (ALLOW_ANY) or
 * BlackHoleCluster (REGISTRY_ONLY).
 *
 * Not generated yet: direct responses, and header manipulation per weighted destination.
 *
 * @module
 */
import { isHttpProtocol } from "@mesh/shared/config/validation/ports";
import { TYPE_URL } from "@mesh/proto/type_urls";
import type { Proxy } from "../../model/proxy.ts";
import type { Service, ServicePort } from "../../model/service.ts";
import type { PushContext } from "../../push/push_context.ts";
import { cacheKey, type GeneratedResource, type GenerateRequest, type XdsGenerator } from "../generator.ts";
import { stableJson } from "../fingerprint.ts";
import { createHash } from "node:crypto";
import { derivedTable } from "../../push/derived_memo.ts";
import { envoyRoute } from "../grpc_rds.ts";
import { durationFromNanos, type DurationObject } from "../envoy_duration.ts";
import type { EnvoyObject } from "../route_match.ts";
import { type PlannedRouteConfiguration, planRouteConfiguration, type RoutePlan } from "../route_plan.ts";
import type { VirtualServiceSpec } from "@mesh/shared/config/networking/virtual_service";
import { BLACK_HOLE_CLUSTER, PASSTHROUGH_CLUSTER } from "./envoy_cds.ts";
import { GatewayRoutes, planGatewayRouteConfig } from "./gateway_plan.ts";
import { gatewayRouteConfig } from "./gateway_resources.ts";
import { envoyProxyShape } from "./envoy_shape.ts";
import { encodeRouteConfigurationAny } from "./route_config_bytes.ts";
import { egressServicesForPort, hasPortBoundEgress } from "./egress_ports.ts";
import { rdsUnaffectedBy } from "./unaffected_kinds.ts";

/** True for ports an outbound HTTP listener (and so a route configuration) serves. */
export function isHttpPort(port: ServicePort): boolean {
  return port.protocol !== "Unsupported" && isHttpProtocol(port.protocol) && port.protocol !== "HTTPS";
}

/** True for ports of undeclared protocol whose listeners detect HTTP (outbound sniffing on). */
export function isSniffedPort(port: ServicePort, push: PushContext): boolean {
  return port.protocol === "Unsupported" && push.protocolSniffing.outbound;
}

/** True for ports that have a route configuration: HTTP ones, and sniffed ones for the HTTP they detect. */
function isRoutedPort(port: ServicePort, push: PushContext): boolean {
  return isHttpPort(port) || isSniffedPort(port, push);
}

/**
 * The names a client in `namespace` may use for a service, most literal first: the FQDN and, for a service of
 * the client's own namespace under `<ns>.svc.<domain>`, the short name and `name.ns`, `name.ns.svc`; for other
 * namespaces `name.ns` and `name.ns.svc`; then the service's addresses. Each also with `:port`.
 */
export function virtualHostDomains(service: Service, port: number, namespace: string): string[] {
  const names = [service.hostname];
  const svc = `.${service.namespace}.svc.`;
  const at = service.hostname.indexOf(svc);
  if (at > 0) {
    const short = service.hostname.slice(0, at);
    if (service.namespace === namespace) names.push(short);
    names.push(`${short}.${service.namespace}`, `${short}.${service.namespace}.svc`);
  }
  names.push(...service.addresses.filter((a) => a !== "0.0.0.0"));
  return names.flatMap((name) => [name, `${name}:${port}`]);
}

/** The plan of one virtual host: its routing plan and the domains left after earlier hosts took theirs. */
interface VirtualHostPlan {
  readonly plan: RoutePlan;
  readonly domains: readonly string[];
  readonly virtualService?: VirtualServiceSpec;
}

/** The resolved inputs of one route configuration; its cache key names them ({@link routeConfigKeyId}). */
export interface EnvoyRouteConfigPlan {
  /** The port, which is also the route configuration's name. */
  readonly port: number;
  /** Virtual hosts in order. */
  readonly hosts: readonly { readonly plan: RoutePlan; readonly domains: readonly string[] }[];
  /** Where requests for unknown hosts go. */
  readonly fallback: typeof PASSTHROUGH_CLUSTER | typeof BLACK_HOLE_CLUSTER;
}

/** The virtual host of one service: its domains and routes, `defaultTimeout` where its VirtualService sets none. */
function virtualHost(host: VirtualHostPlan, defaultTimeout: DurationObject | undefined): EnvoyObject {
  return {
    name: host.plan.virtualHost,
    domains: [...host.domains],
    routes: host.plan.routes.map((route) => envoyRoute(route, host.virtualService, defaultTimeout)),
  };
}

/** The last virtual host: every other authority goes to the fallback cluster. */
function allowAnyHost(fallback: EnvoyRouteConfigPlan["fallback"]): EnvoyObject {
  return {
    name: "allow_any",
    domains: ["*"],
    routes: [{
      name: "allow_any",
      match: { prefix: "/" },
      route: { cluster: fallback, timeout: { seconds: "0" } },
    }],
  };
}

/** `MESH_DEFAULT_REQUEST_TIMEOUT` as a Duration; undefined when it is zero (routes keep no timeout). */
export function requestTimeout(push: PushContext): DurationObject | undefined {
  return push.defaultRequestTimeoutNs > 0n ? durationFromNanos(push.defaultRequestTimeoutNs) : undefined;
}

/** Route configuration fields after `virtual_hosts`: Envoy need not know every cluster a route names. */
const ROUTE_CONFIG_TAIL = { validate_clusters: { value: false } };

function routeConfig(
  plan: EnvoyRouteConfigPlan,
  hosts: readonly VirtualHostPlan[],
  defaultTimeout: DurationObject | undefined,
): EnvoyObject {
  return {
    name: String(plan.port),
    virtual_hosts: [...hosts.map((host) => virtualHost(host, defaultTimeout)), allowAnyHost(plan.fallback)],
    ...ROUTE_CONFIG_TAIL,
  };
}

/**
 * SHA-256 of each virtual host's `stableJson({ domains, plan })`, by plan object, then domain list (by
 * identity): one per distinct host per snapshot. Plans are shared by the sidecars of a routes shape and domain
 * lists by every namespace but the service's own, so the configurations of a hundred namespaces look up the
 * same thousand digests rather than each writing every host's JSON again.
 */
const HOST_DIGESTS = derivedTable<RoutePlan, readonly string[], string>("rds.hostDigests");

/** The digest of one host: its key in the configuration's cache key and in the memo of encoded hosts. */
function hostDigest(push: PushContext, host: EnvoyRouteConfigPlan["hosts"][number]): string {
  return push.derived.get(HOST_DIGESTS, host.plan, host.domains, () => {
    const json = `{"domains":${
      push.derived.get(DOMAINS_JSON, host.domains, undefined, () => JSON.stringify(host.domains))
    },"plan":${stableJson(host.plan)}}`;
    return createHash("sha256").update(json).digest("base64url");
  });
}

/**
 * The cache key of a sidecar's route configuration: its port, fallback and the digest of each host's
 * `stableJson({ domains, plan })`, in order. Equal keys name equal plans (the digests are SHA-256), and the
 * key is written from a few dozen bytes per host where the plan's JSON is hundreds.
 */
export function routeConfigKeyId(push: PushContext, plan: EnvoyRouteConfigPlan): string {
  const digests = plan.hosts.map((host) => hostDigest(push, host));
  return `{"fallback":${JSON.stringify(plan.fallback)},"hosts":[${digests.join(",")}],"port":${plan.port}}`;
}

/**
 * A sidecar's route configuration as a cacheable resource, keyed by {@link routeConfigKeyId}; each host's digest
 * is also its key in the per-snapshot memo of encoded virtual hosts.
 */
function sidecarRouteConfig(
  push: PushContext,
  { plan, hosts, dependsOn }: ReturnType<typeof planRouteConfig>,
): GeneratedResource {
  const defaultTimeout = requestTimeout(push);
  return {
    name: String(plan.port),
    key: cacheKey(TYPE_URL.route, ["envoy", routeConfigKeyId(push, plan)], dependsOn),
    build: () => routeConfig(plan, hosts, defaultTimeout),
    encode: (schema) =>
      encodeRouteConfigurationAny(push.derived, {
        head: { name: String(plan.port) },
        hosts: [
          ...hosts.map((host, i) => ({
            key: hostDigest(push, plan.hosts[i]),
            build: () => virtualHost(host, defaultTimeout),
          })),
          { key: `allow_any ${plan.fallback}`, build: () => allowAnyHost(plan.fallback) },
        ],
        tail: ROUTE_CONFIG_TAIL,
      }, schema),
  };
}

/** Domains by service, then by port and whether the client namespace is the service's own. */
const DOMAIN_LISTS = derivedTable<Service, string, readonly string[]>("rds.domainLists", { carried: true });

/**
 * `virtualHostDomains`, one frozen list per service, port and kind of client: the domains read the client's
 * namespace only to add short names for its own services, so every other namespace shares a list.
 */
function sharedDomains(
  push: PushContext,
  service: Service,
  port: number,
  namespace: string,
  keys: { readonly own: string; readonly other: string },
): readonly string[] {
  return push.derived.get(
    DOMAIN_LISTS,
    service,
    service.namespace === namespace ? keys.own : keys.other,
    () => Object.freeze(virtualHostDomains(service, port, namespace)),
  );
}

/** `JSON.stringify` of a domain list, once per list: lists are shared by every namespace that sees a host alike. */
const DOMAINS_JSON = derivedTable<readonly string[], undefined, string>("rds.domainsJson", { carried: true });

/** Planned hosts by service, then by the shape of what route planning reads of a proxy and the port. */
const HOST_PLANS = derivedTable<Service, string, PlannedRouteConfiguration>("rds.hostPlans");

/**
 * The routes of one service and port as `proxy` sees them, planned once per snapshot for every sidecar whose
 * routes shape is equal. Planning reads the proxy's namespace only through what `namespaceView` covers
 * (hostname lookups, DestinationRule precedence, `sourceNamespace`), its Sidecar scope and its labels
 * (`sourceLabels`): the shape without short names, which only the domains read, and those are not planned here.
 */
function sharedHostPlan(
  proxy: Proxy,
  push: PushContext,
  shapeAndPort: string,
  service: Service,
  servicePort: ServicePort,
): PlannedRouteConfiguration {
  return push.derived.get(HOST_PLANS, service, shapeAndPort, () => {
    const target = { name: `${service.hostname}:${servicePort.port}`, service, port: servicePort };
    return planRouteConfiguration(target, proxy, push, { envoy: true });
  });
}

/** Services of a visible list routed on a port, by hostname, by list (by identity) and port. */
const ROUTED_SERVICES = derivedTable<readonly Service[], number, readonly Service[]>("rds.routedServices");

/**
 * The services of `visible` with a routed `port`, sorted by hostname: once per list and port, since namespaces
 * that share a default scope share its list.
 */
function routedServices(push: PushContext, visible: readonly Service[], port: number): readonly Service[] {
  return push.derived.get(ROUTED_SERVICES, visible, port, () =>
    Object.freeze(
      visible
        .filter((s) => s.ports.some((p) => p.port === port && isRoutedPort(p, push)))
        .sort((a, b) => a.hostname < b.hostname ? -1 : a.hostname > b.hostname ? 1 : 0),
    ));
}

/** What {@link planHosts} gives: hosts in order, and the `dependsOn` keys of every host. */
interface PlannedHosts {
  readonly hosts: readonly VirtualHostPlan[];
  readonly dependsOn: readonly string[];
}

/**
 * Plans the hosts of `services` in order as a client in `namespace` sees them. Envoy rejects a route
 * configuration that lists a domain twice: the first service to claim one keeps it. With `whole`, gives
 * undefined instead of leaving out any domain or host, so every service has its host at its own index.
 */
function planHosts(
  proxy: Proxy,
  push: PushContext,
  services: readonly Service[],
  ctx: {
    readonly port: number;
    readonly namespace: string;
    readonly shapeAndPort: string;
    readonly whole: boolean;
  },
): PlannedHosts | undefined {
  const domainKeys = { own: `${ctx.port} own`, other: `${ctx.port}` };
  const taken = new Set<string>();
  const hosts: VirtualHostPlan[] = [];
  const dependsOn = new Set<string>();
  for (const service of services) {
    const servicePort = service.ports.find((p) => p.port === ctx.port)!;
    const all = sharedDomains(push, service, ctx.port, ctx.namespace, domainKeys);
    const clash = all.some((d) => taken.has(d));
    if (ctx.whole && (clash || all.length === 0)) return undefined;
    const domains = clash ? all.filter((d) => !taken.has(d)) : all;
    if (domains.length === 0) continue;
    for (const d of domains) taken.add(d);
    const planned = sharedHostPlan(proxy, push, ctx.shapeAndPort, service, servicePort);
    for (const key of planned.dependsOn) dependsOn.add(key);
    hosts.push({
      plan: planned.plan,
      domains,
      ...(planned.virtualService ? { virtualService: planned.virtualService.resource.spec } : {}),
    });
  }
  return { hosts, dependsOn: [...dependsOn] };
}

/**
 * A routed list's hosts as a namespace that owns none of its services sees them, when no two of them share a
 * domain: every other namespace's hosts differ only in its own services' short names.
 */
interface ForeignHosts extends PlannedHosts {
  /** Every domain of `hosts`. */
  readonly claimed: ReadonlySet<string>;
  /** Indexes into `hosts` of each namespace's own services. */
  readonly byNamespace: ReadonlyMap<string, readonly number[]>;
}

/** Foreign hosts by routed list (by identity), then routes shape and port; null where two hosts share a domain. */
const FOREIGN_HOSTS = derivedTable<readonly Service[], string, ForeignHosts | null>("rds.foreignHosts");

/**
 * The hosts of `routed` for `proxy`, from the hosts every namespace shares: planned once per routed list and
 * routes shape, then the proxy's own services given their short names. Undefined when a short name or any two
 * shared hosts claim one domain, which the full walk resolves by order.
 */
function fromForeignHosts(
  proxy: Proxy,
  push: PushContext,
  routed: readonly Service[],
  port: number,
  shapeAndPort: string,
): PlannedHosts | undefined {
  const foreign = push.derived.get(FOREIGN_HOSTS, routed, shapeAndPort, () => {
    // No service's namespace is empty, so every list is the one a foreign client sees.
    const planned = planHosts(proxy, push, routed, { port, namespace: "", shapeAndPort, whole: true });
    if (planned === undefined) return null;
    const byNamespace = new Map<string, number[]>();
    routed.forEach((service, i) => {
      const indexes = byNamespace.get(service.namespace);
      if (indexes === undefined) byNamespace.set(service.namespace, [i]);
      else indexes.push(i);
    });
    return { ...planned, claimed: new Set(planned.hosts.flatMap((h) => h.domains)), byNamespace };
  });
  if (foreign === null) return undefined;
  const own = foreign.byNamespace.get(proxy.namespace);
  if (own === undefined) return foreign;
  const hosts = foreign.hosts.slice();
  const shortNames = new Set<string>();
  const domainKeys = { own: `${port} own`, other: `${port}` };
  for (const i of own) {
    const domains = sharedDomains(push, routed[i], port, proxy.namespace, domainKeys);
    for (const d of domains) {
      if (hosts[i].domains.includes(d)) continue;
      if (foreign.claimed.has(d) || shortNames.has(d)) return undefined;
      shortNames.add(d);
    }
    hosts[i] = { ...hosts[i], domains };
  }
  return { hosts, dependsOn: foreign.dependsOn };
}

/** Plans the route configuration of one port for a proxy; the `dependsOn` keys of every host. */
export function planRouteConfig(
  proxy: Proxy,
  push: PushContext,
  port: number,
): { plan: EnvoyRouteConfigPlan; hosts: readonly VirtualHostPlan[]; dependsOn: readonly string[] } {
  const scope = push.sidecarScope(proxy);
  // Written once per configuration rather than once per service: a string built once is hashed once.
  const shapeAndPort = `${envoyProxyShape(proxy, push, { labels: true })}\u0000${port}`;
  const onPort = hasPortBoundEgress(scope) ? egressServicesForPort(push, scope, port) : undefined;
  const routed = routedServices(push, push.servicesVisibleTo(proxy), port);
  const { hosts, dependsOn } =
    (onPort === undefined ? fromForeignHosts(proxy, push, routed, port, shapeAndPort) : undefined) ??
      planHosts(proxy, push, onPort === undefined ? routed : routed.filter((s) => onPort.has(s)), {
        port,
        namespace: proxy.namespace,
        shapeAndPort,
        whole: false,
      })!;
  const fallback = scope.outboundTrafficPolicy.mode === "REGISTRY_ONLY"
    ? BLACK_HOLE_CLUSTER
    : PASSTHROUGH_CLUSTER;
  return {
    plan: { port, hosts: hosts.map(({ plan, domains }) => ({ plan, domains })), fallback },
    hosts,
    dependsOn,
  };
}

/**
 * The outbound HTTP ports of the services a proxy sees, ascending; with `sniffed`, also the ports of
 * undeclared protocol whose listeners detect HTTP (they route through the same route configurations).
 */
export function outboundHttpPorts(proxy: Proxy, push: PushContext, sniffed = false): number[] {
  const ports = new Set<number>();
  const scope = push.sidecarScope(proxy);
  const portBound = hasPortBoundEgress(scope);
  for (const service of push.servicesVisibleTo(proxy)) {
    for (const port of service.ports) {
      if (portBound && !egressServicesForPort(push, scope, port.port).has(service)) continue;
      if (isHttpPort(port) || (sniffed && isSniffedPort(port, push))) ports.add(port.port);
    }
  }
  return [...ports].sort((a, b) => a - b);
}

/**
 * Builds the route configurations an Envoy sidecar watches (named by port). Reads the proxy's scope and
 * namespace, the VirtualServices and DestinationRules the route plans read, and the scope's outbound policy.
 */
export const envoyRdsGenerator: XdsGenerator<PushContext> = {
  typeUrl: TYPE_URL.route,
  unaffectedBy: rdsUnaffectedBy,
  shapeOf: (proxy, push) => envoyProxyShape(proxy, push, { labels: true, shortNames: true }),
  generate(proxy: Proxy, push: PushContext, request: GenerateRequest): GeneratedResource[] {
    if (proxy.type === "router") {
      const out: GeneratedResource[] = [];
      const routes = new GatewayRoutes(proxy, push);
      for (const name of new Set(request.names)) {
        const planned = planGatewayRouteConfig(proxy, push, name, routes);
        if (planned === undefined) continue;
        const key = planned.hosts.map((h) => ({
          host: h.host,
          routes: h.routes,
          vs: h.virtualService,
          redirect: h.httpsRedirect ?? false,
        }));
        out.push({
          name,
          key: cacheKey(TYPE_URL.route, ["gateway", name, stableJson(key)], planned.dependsOn),
          build: () => gatewayRouteConfig(name, planned.port, planned.hosts, requestTimeout(push)),
        });
      }
      return out;
    }
    const ports = request.names.length === 0
      ? outboundHttpPorts(proxy, push, true)
      : [...new Set(request.names)].filter((n) => /^[1-9][0-9]{0,4}$/.test(n)).map(Number);
    return ports.map((port) => sidecarRouteConfig(push, planRouteConfig(proxy, push, port)));
  },
};
