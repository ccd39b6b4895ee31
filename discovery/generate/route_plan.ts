/**
 * Everything the RouteConfiguration of one gRPC target depends on, resolved against a push snapshot for one
 * proxy: which VirtualService routes the service, which of its routes and match conditions apply to the proxy,
 * the clusters each route sends to (ports and subsets resolved) and its hash policy. The plan is plain data;
 * with the VirtualService's fingerprint it is the route's cache key, and building from it reads nothing else.
 *
 * @module
 */
import type { Destination } from "@mesh/shared/config/networking/destination";
import type { HTTPRoute } from "@mesh/shared/config/networking/virtual_service_http";
import type { RouteDestination } from "@mesh/shared/config/networking/route_destinations";
import type { L4MatchAttributes } from "@mesh/shared/config/networking/virtual_service_match";
import type { Proxy } from "../model/proxy.ts";
import type { PushContext } from "../push/push_context.ts";
import { configKey, serviceKey } from "../push/push_request.ts";
import { outboundClusterName } from "../push/service_index.ts";
import type { IndexedVirtualService } from "../push/virtual_service_index.ts";
import { type GrpcTarget, splitHostPort } from "./grpc_target.ts";
import { hashPolicy, type WeightedCluster } from "./route_action.ts";
import { type EnvoyObject, matchApplies } from "./route_match.ts";
import { mergeTrafficPolicy } from "./traffic_policy_merge.ts";
import { virtualServiceFingerprint, virtualServiceFor } from "./virtual_service_lookup.ts";

/** One Envoy route to build: an HTTP route of the VirtualService with one of its match conditions. */
export interface PlannedRoute {
  /** Index in the VirtualService's `http` list; -1 for the default route of a service without one. */
  readonly http: number;
  /** Index in that route's `match` list; -1 for a route without conditions. */
  readonly match: number;
  /** Clusters the route sends to, with weights. */
  readonly clusters: readonly WeightedCluster[];
  /** Envoy hash policy for consistent-hash load balancing; absent otherwise. */
  readonly hashPolicy?: readonly EnvoyObject[];
  /** The cluster requests are mirrored to (Envoy proxies only). */
  readonly mirrorCluster?: string;
}

/** TCP and TLS routes resolved for one listener: clusters per route, and the SNI names of TLS ones. */
export interface PlannedL4Routes {
  readonly tcp: readonly { readonly clusters: readonly WeightedCluster[] }[];
  readonly tls: readonly {
    readonly sniHosts: readonly string[];
    readonly clusters: readonly WeightedCluster[];
  }[];
}

/** The resolved inputs of one RouteConfiguration. */
export interface RoutePlan {
  /** The route configuration's name: the listener name the client asked for. */
  readonly name: string;
  /** `hostname:port` of the service. */
  readonly virtualHost: string;
  /** Domains of the virtual host: `hostname:port`, `hostname` and the target as dialled. */
  readonly domains: readonly string[];
  /** Fingerprint of the VirtualService (and delegates) the routes come from; absent for the default route. */
  readonly virtualService?: string;
  /** Routes in order; the first that matches a request wins. */
  readonly routes: readonly PlannedRoute[];
}

/** A plan, the VirtualService it refers to, and the config and service keys whose change makes it stale. */
export interface PlannedRouteConfiguration {
  readonly plan: RoutePlan;
  readonly virtualService?: IndexedVirtualService;
  readonly dependsOn: readonly string[];
}

/** Domains a client may use as the authority of this target: the service's FQDN and the name it dialled. */
export function targetDomains(target: GrpcTarget): string[] {
  const { hostname } = target.service;
  const port = target.port.port;
  const dialled = splitHostPort(target.name)?.host ?? hostname;
  return [...new Set([`${hostname}:${port}`, hostname, target.name, dialled])];
}

/** Resolves routes for one proxy and one snapshot; collects what they depend on. */
class RoutePlanner {
  readonly dependsOn = new Set<string>();

  constructor(
    readonly proxy: Proxy,
    readonly push: PushContext,
    readonly listenerPort: number,
    readonly gatewayNames?: readonly string[],
    /** Plans for an Envoy proxy: redirects and mirrors are planned too. */
    readonly envoy = false,
  ) {}

  /**
   * The cluster of a destination, as Istio names it: the destination's port, else the only port of its
   * service, else the port the client dialled.
   */
  cluster(destination: Destination): { name: string; port: number } {
    const service = this.push.serviceForHostname(this.proxy, destination.host);
    if (service !== undefined) this.dependsOn.add(serviceKey(service.namespace, service.hostname));
    const port = destination.port?.number ??
      (service !== undefined && service.ports.length === 1 ? service.ports[0].port : this.listenerPort);
    return { name: outboundClusterName(destination.host, port, destination.subset ?? ""), port };
  }

  /** The hash policy of the DestinationRule for a destination, when it asks for consistent hashing. */
  hash(destination: Destination, port: number): EnvoyObject[] | undefined {
    // By service when the host is one, so the rules its namespace exports apply as they do to its clusters.
    const service = this.push.serviceForHostname(this.proxy, destination.host);
    const rule = this.push.destinationRule(this.proxy, service ?? destination.host);
    if (rule === undefined) return undefined;
    for (const source of rule.sources) {
      this.dependsOn.add(configKey("DestinationRule", source.meta.namespace, source.meta.name));
    }
    const subset = destination.subset
      ? rule.spec.subsets?.find((s) => s.name === destination.subset)
      : undefined;
    return hashPolicy(mergeTrafficPolicy(rule.spec.trafficPolicy, subset?.trafficPolicy, port)?.loadBalancer);
  }

  /**
   * The clusters of an HTTP route, as Istio: a single destination takes all traffic whatever its weight; among
   * several, zero weights are dropped. Consistent hashing applies to single-destination routes only.
   */
  destinations(route: HTTPRoute): Omit<PlannedRoute, "http" | "match"> | undefined {
    const all = route.route ?? [];
    const kept = all.length === 1 ? all : all.filter((d) => (d.weight ?? 0) > 0);
    if (kept.length === 0) return undefined;
    const resolved = kept.map((d) => ({ destination: d.destination, ...this.cluster(d.destination) }));
    if (resolved.length === 1) {
      const hash = this.hash(resolved[0].destination, resolved[0].port);
      return { clusters: [{ name: resolved[0].name, weight: 100 }], ...(hash ? { hashPolicy: hash } : {}) };
    }
    return { clusters: resolved.map((r, i) => ({ name: r.name, weight: kept[i].weight ?? 0 })) };
  }

  /**
   * Planned routes of a VirtualService: HTTP routes that forward (or, for Envoy, redirect), once per match
   * condition that applies; for Envoy also the mirror's cluster.
   */
  routes(vs: IndexedVirtualService): PlannedRoute[] {
    const out: PlannedRoute[] = [];
    for (const [i, route] of (vs.resource.spec.http ?? []).entries()) {
      // gRPC clients fail RPCs on redirects; delegating routes were merged into their root by the index.
      if (route.delegate !== undefined || (route.redirect !== undefined && !this.envoy)) continue;
      const matches = route.match ?? [];
      const applicable = matches.length === 0
        ? [-1]
        : [...matches.keys()].filter((j) =>
          matchApplies(matches[j], this.proxy, this.listenerPort, this.gatewayNames)
        );
      if (applicable.length === 0) continue;
      const destinations = route.redirect !== undefined ? { clusters: [] } : this.destinations(route);
      if (destinations === undefined) continue;
      const mirror = this.envoy && route.mirror !== undefined ? this.cluster(route.mirror).name : undefined;
      for (const j of applicable) {
        out.push({ http: i, match: j, ...destinations, ...(mirror ? { mirrorCluster: mirror } : {}) });
      }
    }
    return out;
  }

  /** The clusters of TCP or TLS route destinations, weighted as `destinations` weighs HTTP ones. */
  l4Clusters(route: readonly RouteDestination[]): WeightedCluster[] {
    const kept = route.length === 1 ? route : route.filter((d) => (d.weight ?? 0) > 0);
    return kept.map((d) => ({
      name: this.cluster(d.destination).name,
      weight: kept.length === 1 ? 100 : d.weight ?? 0,
    }));
  }

  /** The TCP and TLS routes of a VirtualService that apply to the listener port and gateways, in order. */
  l4Routes(vs: IndexedVirtualService): PlannedL4Routes {
    const applies = (matches: readonly L4MatchAttributes[] | undefined) =>
      (matches ?? []).length === 0 ||
      (matches ?? []).some((m) => matchApplies(m, this.proxy, this.listenerPort, this.gatewayNames));
    const spec = vs.resource.spec;
    return {
      tcp: (spec.tcp ?? []).filter((r) => applies(r.match)).map((r) => ({
        clusters: this.l4Clusters(r.route),
      }))
        .filter((r) => r.clusters.length > 0),
      tls: (spec.tls ?? []).flatMap((r) =>
        r.match.filter((m) => applies([m])).map((m) => ({
          sniHosts: [...m.sniHosts],
          clusters: this.l4Clusters(r.route),
        }))
      ).filter((r) => r.clusters.length > 0),
    };
  }

  /** The route of a service without VirtualService routes: every path to the service's own cluster. */
  defaultRoute(target: GrpcTarget): PlannedRoute {
    const destination = { host: target.service.hostname, port: { number: target.port.port } };
    const hash = this.hash(destination, target.port.port);
    return {
      http: -1,
      match: -1,
      clusters: [{ name: outboundClusterName(target.service.hostname, target.port.port), weight: 100 }],
      ...(hash ? { hashPolicy: hash } : {}),
    };
  }
}

/**
 * Plans the RouteConfiguration of a target for a proxy: the routes of the VirtualService that claims the
 * service's hostname among those the proxy imports for the mesh gateway, or, when there is none or none of its
 * routes applies to the proxy and port, one default route to the service's cluster (as Istio does).
 */
export function planRouteConfiguration(
  target: GrpcTarget,
  proxy: Proxy,
  push: PushContext,
  options: { readonly envoy?: boolean } = {},
): PlannedRouteConfiguration {
  const planner = new RoutePlanner(proxy, push, target.port.port, undefined, options.envoy ?? false);
  planner.dependsOn.add(serviceKey(target.service.namespace, target.service.hostname));
  const base = {
    name: target.name,
    virtualHost: `${target.service.hostname}:${target.port.port}`,
    domains: targetDomains(target),
  };
  const vs = virtualServiceFor(push, push.virtualServicesFor(proxy, "mesh"), target.service.hostname);
  if (vs !== undefined) {
    planner.dependsOn.add(configKey("VirtualService", vs.resource.meta.namespace, vs.resource.meta.name));
    for (const delegate of vs.delegates) {
      const slash = delegate.indexOf("/");
      planner.dependsOn.add(configKey("VirtualService", delegate.slice(0, slash), delegate.slice(slash + 1)));
    }
    const routes = planner.routes(vs);
    if (routes.length > 0) {
      return {
        plan: { ...base, virtualService: virtualServiceFingerprint(vs, push), routes },
        virtualService: vs,
        dependsOn: [...planner.dependsOn],
      };
    }
  }
  return { plan: { ...base, routes: [planner.defaultRoute(target)] }, dependsOn: [...planner.dependsOn] };
}

/**
 * Plans the routes of a VirtualService bound to a gateway, for a listener port of that gateway: the HTTP routes
 * whose matches apply to the gateway (by any of `gatewayNames`) and port, with their clusters resolved.
 */
export function planGatewayRoutes(
  vs: IndexedVirtualService,
  proxy: Proxy,
  push: PushContext,
  port: number,
  gatewayNames: readonly string[],
): { routes: PlannedRoute[]; dependsOn: string[] } {
  const planner = new RoutePlanner(proxy, push, port, gatewayNames, true);
  planner.dependsOn.add(configKey("VirtualService", vs.resource.meta.namespace, vs.resource.meta.name));
  return { routes: planner.routes(vs), dependsOn: [...planner.dependsOn] };
}

/**
 * Plans the TCP and TLS routes of a VirtualService bound to a gateway, for a listener port of that gateway:
 * the routes whose matches apply to the gateway (by any of `gatewayNames`) and port, clusters resolved.
 */
export function planGatewayL4Routes(
  vs: IndexedVirtualService,
  proxy: Proxy,
  push: PushContext,
  port: number,
  gatewayNames: readonly string[],
): PlannedL4Routes & { dependsOn: string[] } {
  const planner = new RoutePlanner(proxy, push, port, gatewayNames, true);
  planner.dependsOn.add(configKey("VirtualService", vs.resource.meta.namespace, vs.resource.meta.name));
  return { ...planner.l4Routes(vs), dependsOn: [...planner.dependsOn] };
}

/**
 * Plans the TCP and TLS routes a sidecar applies to a service port: those of the VirtualService that claims
 * the hostname among the ones the proxy imports for the mesh, whose matches apply to the proxy and port.
 */
export function planMeshL4Routes(
  hostname: string,
  port: number,
  proxy: Proxy,
  push: PushContext,
): PlannedL4Routes & { dependsOn: string[] } {
  const vs = virtualServiceFor(push, push.virtualServicesFor(proxy, "mesh"), hostname);
  if (vs === undefined) return { tcp: [], tls: [], dependsOn: [] };
  const planner = new RoutePlanner(proxy, push, port, undefined, true);
  planner.dependsOn.add(configKey("VirtualService", vs.resource.meta.namespace, vs.resource.meta.name));
  return { ...planner.l4Routes(vs), dependsOn: [...planner.dependsOn] };
}
