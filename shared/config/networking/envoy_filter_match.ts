import { childPath, type ValidationReport } from "../validation/report.ts";
import { integerAt, stringAt, stringMapAt } from "../validation/fields.ts";
import { checkRe2 } from "../validation/regex.ts";
import { checkPort } from "../validation/ports.ts";
import { enumAt, isSet, optionalObjectAt } from "../validation/values.ts";
import type { ApplyTo } from "./envoy_filter.ts";

/** Which proxies and generated objects a patch applies to. */
export interface EnvoyConfigObjectMatch {
  /** Traffic direction and proxy kind the patch applies to (default `ANY`). */
  readonly context?: "ANY" | "SIDECAR_INBOUND" | "SIDECAR_OUTBOUND" | "GATEWAY";
  /** Proxies the patch applies to, by version regular expression and metadata. */
  readonly proxy?: { readonly proxyVersion?: string; readonly metadata?: Readonly<Record<string, string>> };
  /** Listener to match, by port, name, filter chain and filter. */
  readonly listener?: {
    readonly portNumber?: number;
    readonly portName?: string;
    readonly filterChain?: {
      readonly name?: string;
      readonly sni?: string;
      readonly transportProtocol?: string;
      readonly applicationProtocols?: string;
      readonly filter?: { readonly name?: string; readonly subFilter?: { readonly name?: string } };
      readonly destinationPort?: number;
    };
    readonly name?: string;
  };
  /** Route configuration to match, by port, gateway, name, virtual host and route. */
  readonly routeConfiguration?: {
    readonly portNumber?: number;
    readonly portName?: string;
    readonly gateway?: string;
    readonly vhost?: {
      readonly name?: string;
      readonly route?: {
        readonly name?: string;
        readonly action?: "ANY" | "ROUTE" | "REDIRECT" | "DIRECT_RESPONSE";
      };
    };
    readonly name?: string;
  };
  /** Cluster to match, by port, service, subset or name. */
  readonly cluster?: {
    readonly portNumber?: number;
    readonly service?: string;
    readonly subset?: string;
    readonly name?: string;
  };
}

const LISTENER_CLASS: readonly ApplyTo[] = ["LISTENER", "FILTER_CHAIN", "NETWORK_FILTER", "HTTP_FILTER"];
const ROUTE_CLASS: readonly ApplyTo[] = ["ROUTE_CONFIGURATION", "VIRTUAL_HOST", "HTTP_ROUTE"];
const HCM_NAMES = ["envoy.filters.network.http_connection_manager", "envoy.http_connection_manager"];

function portNumberAt(report: ValidationReport, path: string, value: unknown): void {
  const n = integerAt(report, path, value);
  if (n !== undefined && n !== 0) {
    const problem = checkPort(n);
    if (problem) report.error(path, problem);
  }
}

function strings(
  report: ValidationReport,
  path: string,
  obj: Record<string, unknown>,
  fields: readonly string[],
): void {
  for (const f of fields) stringAt(report, childPath(path, f), obj[f]);
}

function listenerMatchAt(
  report: ValidationReport,
  path: string,
  value: unknown,
  applyTo: ApplyTo | undefined,
): void {
  const obj = optionalObjectAt(report, path, value, ["portNumber", "portName", "filterChain", "name"]);
  if (obj === undefined) return;
  portNumberAt(report, childPath(path, "portNumber"), obj.portNumber);
  strings(report, path, obj, ["portName", "name"]);
  const fcPath = childPath(path, "filterChain");
  const fc = optionalObjectAt(report, fcPath, obj.filterChain, [
    "name",
    "sni",
    "transportProtocol",
    "applicationProtocols",
    "filter",
    "destinationPort",
  ]);
  if (fc === undefined) return;
  strings(report, fcPath, fc, ["name", "sni", "transportProtocol", "applicationProtocols"]);
  portNumberAt(report, childPath(fcPath, "destinationPort"), fc.destinationPort);
  const filterPath = childPath(fcPath, "filter");
  const filter = optionalObjectAt(report, filterPath, fc.filter, ["name", "subFilter"]);
  if (filter === undefined) return;
  const name = stringAt(report, childPath(filterPath, "name"), filter.name);
  if (!name) report.error(childPath(filterPath, "name"), "a filter match needs a name to match on");
  const subPath = childPath(filterPath, "subFilter");
  const sub = optionalObjectAt(report, subPath, filter.subFilter, ["name"]);
  if (sub === undefined) return;
  if (applyTo !== "HTTP_FILTER") {
    report.error(subPath, "a subFilter match can be used with applyTo HTTP_FILTER only");
  }
  if (name && !HCM_NAMES.includes(name)) {
    report.error(subPath, `a subFilter match requires the filter match to name ${HCM_NAMES[0]}`);
  }
  if (!stringAt(report, childPath(subPath, "name"), sub.name)) {
    report.error(childPath(subPath, "name"), "a subFilter match needs a name to match on");
  }
}

function routeConfigurationMatchAt(report: ValidationReport, path: string, value: unknown): void {
  const obj = optionalObjectAt(report, path, value, ["portNumber", "portName", "gateway", "vhost", "name"]);
  if (obj === undefined) return;
  portNumberAt(report, childPath(path, "portNumber"), obj.portNumber);
  strings(report, path, obj, ["portName", "gateway", "name"]);
  const vhostPath = childPath(path, "vhost");
  const vhost = optionalObjectAt(report, vhostPath, obj.vhost, ["name", "route"]);
  if (vhost === undefined) return;
  stringAt(report, childPath(vhostPath, "name"), vhost.name);
  const routePath = childPath(vhostPath, "route");
  const route = optionalObjectAt(report, routePath, vhost.route, ["name", "action"]);
  if (route === undefined) return;
  stringAt(report, childPath(routePath, "name"), route.name);
  enumAt(report, childPath(routePath, "action"), route.action, [
    "ANY",
    "ROUTE",
    "REDIRECT",
    "DIRECT_RESPONSE",
  ]);
}

function clusterMatchAt(report: ValidationReport, path: string, value: unknown): void {
  const obj = optionalObjectAt(report, path, value, ["portNumber", "service", "subset", "name"]);
  if (obj === undefined) return;
  portNumberAt(report, childPath(path, "portNumber"), obj.portNumber);
  strings(report, path, obj, ["service", "subset", "name"]);
}

/**
 * Validates the match of a config patch: at most one of listener, routeConfiguration and cluster, and it
 * must fit `applyTo` (listener matches for listener-class objects, and so on).
 */
export function matchAt(
  report: ValidationReport,
  path: string,
  value: unknown,
  applyTo: ApplyTo | undefined,
): void {
  const obj = optionalObjectAt(report, path, value, [
    "context",
    "proxy",
    "listener",
    "routeConfiguration",
    "cluster",
  ]);
  if (obj === undefined) return;
  enumAt(report, childPath(path, "context"), obj.context, [
    "ANY",
    "SIDECAR_INBOUND",
    "SIDECAR_OUTBOUND",
    "GATEWAY",
  ]);
  proxyMatchAt(report, childPath(path, "proxy"), obj.proxy);
  const objectTypes = (["listener", "routeConfiguration", "cluster"] as const).filter((k) => isSet(obj[k]));
  if (objectTypes.length > 1) report.error(path, `only one of ${objectTypes.join(", ")} may be set`);
  const type = objectTypes[0];
  if (applyTo && type) {
    if (LISTENER_CLASS.includes(applyTo) && type !== "listener") {
      report.error(childPath(path, type), `applyTo ${applyTo} needs a listener match, not ${type}`);
    } else if (ROUTE_CLASS.includes(applyTo) && type !== "routeConfiguration") {
      report.error(childPath(path, type), `applyTo ${applyTo} needs a routeConfiguration match, not ${type}`);
    } else if (applyTo === "CLUSTER" && type !== "cluster") {
      report.error(childPath(path, type), `applyTo CLUSTER needs a cluster match, not ${type}`);
    }
  }
  listenerMatchAt(report, childPath(path, "listener"), obj.listener, applyTo);
  routeConfigurationMatchAt(report, childPath(path, "routeConfiguration"), obj.routeConfiguration);
  clusterMatchAt(report, childPath(path, "cluster"), obj.cluster);
}

/** Validates the proxy match of a patch: proxyVersion is an RE2 regex, metadata a string map. */
export function proxyMatchAt(report: ValidationReport, path: string, value: unknown): void {
  const obj = optionalObjectAt(report, path, value, ["proxyVersion", "metadata"]);
  if (obj === undefined) return;
  const version = stringAt(report, childPath(path, "proxyVersion"), obj.proxyVersion);
  if (version) {
    const problem = checkRe2(version);
    if (problem) report.error(childPath(path, "proxyVersion"), problem);
  }
  stringMapAt(report, childPath(path, "metadata"), obj.metadata);
}
