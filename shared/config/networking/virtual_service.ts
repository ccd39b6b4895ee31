import { childPath, type ValidationReport } from "../validation/report.ts";
import { arrayAt, objectAt } from "../validation/fields.ts";
import type { ValidationContext } from "../validation/context.ts";
import { exportToAt } from "../validation/exportto.ts";
import { checkWildcardDomainOrIp } from "../validation/hosts.ts";
import { earliestOverlaps } from "../validation/host_overlaps.ts";
import { stringListAt } from "../validation/values.ts";
import { gatewayNamesAt, MESH_GATEWAY } from "./gateway_names.ts";
import { type RouteDestination, routeDestinationsAt } from "./route_destinations.ts";
import { type HTTPRoute, httpRouteAt, warnUnreachableRoutes } from "./virtual_service_http.ts";
import {
  l4MatchAt,
  type L4MatchAttributes,
  tlsMatchAt,
  type TLSMatchAttributes,
} from "./virtual_service_match.ts";

/** A TLS route: SNI-based matching of TLS passthrough traffic. */
export interface TLSRoute {
  /** Conditions, any one of which selects the route; at least one. */
  readonly match: readonly TLSMatchAttributes[];
  /** Where matching connections go, with weights. */
  readonly route: readonly RouteDestination[];
}

/** A TCP route: opaque TCP traffic by destination subnet, port and source. */
export interface TCPRoute {
  /** Conditions, any one of which selects the route; none matches every connection. */
  readonly match?: readonly L4MatchAttributes[];
  /** Where matching connections go, with weights. */
  readonly route: readonly RouteDestination[];
}

/**
 * Traffic routing rules for a set of hosts. A virtual service without hosts is a delegate: its HTTP routes
 * are included by root virtual services bound to gateways through `http[].delegate`.
 */
export interface VirtualServiceSpec {
  /**
   * Host names the rules apply to (`*` wildcards, short names completed with the namespace); none makes a
   * delegate.
   */
  readonly hosts?: readonly string[];
  /** Gateways (`namespace/name`, or `mesh` for all sidecars) the rules apply to; none means `mesh`. */
  readonly gateways?: readonly string[];
  /** HTTP routes, the first match wins. */
  readonly http?: readonly HTTPRoute[];
  /** TLS passthrough routes by SNI, the first match wins. */
  readonly tls?: readonly TLSRoute[];
  /** Opaque TCP routes, the first match wins. */
  readonly tcp?: readonly TCPRoute[];
  /**
   * Namespaces the virtual service is visible in: names, `.` (its own) or `*` (all); none uses the mesh
   * default.
   */
  readonly exportTo?: readonly string[];
}

const FIELDS = ["hosts", "gateways", "http", "tls", "tcp", "exportTo"];

function hostsAt(report: ValidationReport, path: string, value: unknown, appliesToMesh: boolean): string[] {
  let allValid = true;
  const hosts = stringListAt(report, path, value, (host) => {
    const problem = checkWildcardDomainOrIp(host) ??
      (appliesToMesh && host === "*"
        ? `wildcard host "*" is not allowed for virtual services bound to the mesh gateway`
        : undefined);
    if (problem) allValid = false;
    return problem;
  });
  // Overlaps only make sense among well-formed hosts, as in Istio. The reference reports every overlapping
  // pair; each host that overlaps an earlier one is reported once here, naming the first: n copies of a host
  // are n - 1 errors, not n²/2.
  if (!allValid) return hosts;
  for (const [j, i] of earliestOverlaps(hosts).entries()) {
    if (i === undefined) continue;
    report.error(
      childPath(path, j),
      `duplicate hosts in virtual service: "${hosts[i]}" and "${hosts[j]}" overlap`,
    );
  }
  return hosts;
}

function tlsRoutesAt(
  report: ValidationReport,
  path: string,
  value: unknown,
  hosts: readonly string[],
): number {
  const routes = arrayAt(report, path, value);
  for (const [i, raw] of routes.entries()) {
    const at = childPath(path, i);
    const obj = objectAt(report, at, raw, ["match", "route"]);
    if (obj === undefined) continue;
    const matches = arrayAt(report, childPath(at, "match"), obj.match);
    if (matches.length === 0) {
      report.error(childPath(at, "match"), "a TLS route must have at least one match condition");
    }
    for (const [j, match] of matches.entries()) {
      tlsMatchAt(report, childPath(childPath(at, "match"), j), match, hosts);
    }
    if (routeDestinationsAt(report, childPath(at, "route"), obj.route, false) === 0) {
      report.error(childPath(at, "route"), "a TLS route needs at least one destination");
    }
  }
  return routes.length;
}

function tcpRoutesAt(report: ValidationReport, path: string, value: unknown): number {
  const routes = arrayAt(report, path, value);
  for (const [i, raw] of routes.entries()) {
    const at = childPath(path, i);
    const obj = objectAt(report, at, raw, ["match", "route"]);
    if (obj === undefined) continue;
    for (const [j, match] of arrayAt(report, childPath(at, "match"), obj.match).entries()) {
      l4MatchAt(report, childPath(childPath(at, "match"), j), match);
    }
    if (routeDestinationsAt(report, childPath(at, "route"), obj.route, false) === 0) {
      report.error(childPath(at, "route"), "a TCP route needs at least one destination");
    }
  }
  return routes.length;
}

/** Validates a VirtualService spec as Istio 1.9 does (delegation enabled). */
export function validateVirtualService(
  spec: unknown,
  report: ValidationReport,
  ctx: ValidationContext,
): void {
  const obj = objectAt(report, "spec", spec, FIELDS);
  if (obj === undefined) return;
  const gateways = gatewayNamesAt(report, "spec.gateways", obj.gateways);
  const appliesToMesh = gateways.length === 0 || gateways.includes(MESH_GATEWAY);
  const appliesToGateway = gateways.some((g) => g !== MESH_GATEWAY);
  const hosts = hostsAt(report, "spec.hosts", obj.hosts, appliesToMesh);
  const isDelegate = hosts.length === 0;
  if (isDelegate) {
    if (gateways.length > 0) {
      report.error("spec.gateways", "a delegate virtual service (no hosts) must not name gateways");
    }
    if (arrayAt(report, "spec.tls", obj.tls).length > 0) {
      report.error("spec.tls", "a delegate virtual service (no hosts) must not have tls routes");
    }
    if (arrayAt(report, "spec.tcp", obj.tcp).length > 0) {
      report.error("spec.tcp", "a delegate virtual service (no hosts) must not have tcp routes");
    }
  }
  const httpRoutes = arrayAt(report, "spec.http", obj.http);
  for (const [i, route] of httpRoutes.entries()) {
    httpRouteAt(report, childPath("spec.http", i), route, { inDelegate: isDelegate, appliesToGateway });
  }
  warnUnreachableRoutes(report, "spec.http", httpRoutes);
  const tlsCount = isDelegate ? 0 : tlsRoutesAt(report, "spec.tls", obj.tls, hosts);
  const tcpCount = isDelegate ? 0 : tcpRoutesAt(report, "spec.tcp", obj.tcp);
  if (httpRoutes.length === 0 && tlsCount === 0 && tcpCount === 0) {
    report.error("spec", "a virtual service needs at least one of http, tcp or tls routes");
  }
  exportToAt(report, "spec.exportTo", obj.exportTo, { namespace: ctx.namespace, allowNone: false });
}
