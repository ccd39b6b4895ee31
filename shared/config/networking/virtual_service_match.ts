import { childPath, type ValidationReport } from "../validation/report.ts";
import { booleanAt, integerAt, isObject, objectAt, stringAt } from "../validation/fields.ts";
import { checkHeaderMatchName } from "../validation/headers.ts";
import { checkIpSubnet, isIp } from "../validation/ip.ts";
import { checkWildcardDomain, hostSubsetOf } from "../validation/hosts.ts";
import { labelsAt } from "../validation/labels.ts";
import { mapKeyPath } from "../validation/paths.ts";
import { checkPort } from "../validation/ports.ts";
import { isSet, stringListAt } from "../validation/values.ts";
import { gatewayNamesAt } from "./gateway_names.ts";
import { type StringMatch, stringMatchAt } from "./string_match.ts";

/** Conditions on an HTTP request; all set conditions must hold. */
export interface HTTPMatchRequest {
  /** Name of the match, prefixed to the route's name in access logs. */
  readonly name?: string;
  /** The request path. */
  readonly uri?: StringMatch;
  /** The URI scheme, such as `http`. */
  readonly scheme?: StringMatch;
  /** The HTTP method. */
  readonly method?: StringMatch;
  /** The `Host`/`:authority` header. */
  readonly authority?: StringMatch;
  /** Request headers by lower-case name; `{}` matches presence. */
  readonly headers?: Readonly<Record<string, StringMatch>>;
  /** The port the request arrived on; 0 or unset means any. */
  readonly port?: number;
  /** Labels the calling workload must have; not allowed in a delegate. */
  readonly sourceLabels?: Readonly<Record<string, string>>;
  /** Gateways the match applies to, overriding the VirtualService's; not allowed in a delegate. */
  readonly gateways?: readonly string[];
  /** Query parameters by name; `{}` matches presence. */
  readonly queryParams?: Readonly<Record<string, StringMatch>>;
  /** Match `uri` case-insensitively. */
  readonly ignoreUriCase?: boolean;
  /** Headers that must not match, by lower-case name. */
  readonly withoutHeaders?: Readonly<Record<string, StringMatch>>;
  /** Namespace the calling workload must be in. */
  readonly sourceNamespace?: string;
}

/** Conditions on a TCP connection. */
export interface L4MatchAttributes {
  /** Destination IPs or CIDR ranges. */
  readonly destinationSubnets?: readonly string[];
  /** The destination port; 0 or unset means any. */
  readonly port?: number;
  /** Deprecated: source IP or CIDR. */
  readonly sourceSubnet?: string;
  /** Labels the calling workload must have. */
  readonly sourceLabels?: Readonly<Record<string, string>>;
  /** Gateways the match applies to, overriding the VirtualService's. */
  readonly gateways?: readonly string[];
  /** Namespace the calling workload must be in. */
  readonly sourceNamespace?: string;
}

/** Conditions on a TLS connection, by SNI. */
export interface TLSMatchAttributes extends L4MatchAttributes {
  /** SNI names to match; each must be one of the VirtualService's hosts or a subset of one. */
  readonly sniHosts: readonly string[];
}

const HTTP_MATCH_FIELDS = [
  "name",
  "uri",
  "scheme",
  "method",
  "authority",
  "headers",
  "port",
  "sourceLabels",
  "gateways",
  "queryParams",
  "ignoreUriCase",
  "withoutHeaders",
  "sourceNamespace",
];
const L4_MATCH_FIELDS = [
  "destinationSubnets",
  "port",
  "sourceSubnet",
  "sourceLabels",
  "gateways",
  "sourceNamespace",
];

function matchPortAt(report: ValidationReport, path: string, value: unknown): void {
  const port = integerAt(report, path, value);
  if (port !== undefined && port !== 0) {
    const problem = checkPort(port);
    if (problem) report.error(path, problem);
  }
}

function stringMatchMapAt(
  report: ValidationReport,
  path: string,
  value: unknown,
  headerNames: boolean,
): void {
  if (!isSet(value)) return;
  if (!isObject(value)) {
    report.error(path, "must be a map of string matches");
    return;
  }
  for (const [key, match] of Object.entries(value)) {
    const at = mapKeyPath(path, key);
    if (headerNames) {
      const problem = checkHeaderMatchName(key);
      if (problem) report.error(at, problem);
    } else if (key === "") report.error(at, "query parameter name cannot be empty");
    if (!isSet(match)) report.error(at, `match for "${key}" cannot be null; use {} to match presence`);
    else stringMatchAt(report, at, match);
  }
}

/** Source conditions shared by every match type; `delegate` forbids those a delegate may not use. */
function sourceConditionsAt(
  report: ValidationReport,
  path: string,
  obj: Record<string, unknown>,
  delegate: boolean,
) {
  const labels = labelsAt(report, childPath(path, "sourceLabels"), obj.sourceLabels);
  const gateways = gatewayNamesAt(report, childPath(path, "gateways"), obj.gateways);
  stringAt(report, childPath(path, "sourceNamespace"), obj.sourceNamespace);
  if (delegate && labels && Object.keys(labels).length > 0) {
    report.error(
      childPath(path, "sourceLabels"),
      "sourceLabels are not allowed in a delegate virtual service",
    );
  }
  if (delegate && gateways.length > 0) {
    report.error(childPath(path, "gateways"), "gateways are not allowed in a delegate virtual service");
  }
}

/** Validates an HTTPMatchRequest. `delegate`: the route belongs to a delegate virtual service. */
export function httpMatchAt(report: ValidationReport, path: string, value: unknown, delegate: boolean): void {
  const obj = objectAt(report, path, value, HTTP_MATCH_FIELDS);
  if (obj === undefined) return;
  stringAt(report, childPath(path, "name"), obj.name);
  for (const field of ["uri", "scheme", "method", "authority"] as const) {
    if (isSet(obj[field])) stringMatchAt(report, childPath(path, field), obj[field]);
  }
  stringMatchMapAt(report, childPath(path, "headers"), obj.headers, true);
  stringMatchMapAt(report, childPath(path, "withoutHeaders"), obj.withoutHeaders, true);
  stringMatchMapAt(report, childPath(path, "queryParams"), obj.queryParams, false);
  matchPortAt(report, childPath(path, "port"), obj.port);
  booleanAt(report, childPath(path, "ignoreUriCase"), obj.ignoreUriCase);
  sourceConditionsAt(report, path, obj, delegate);
}

function l4ConditionsAt(report: ValidationReport, path: string, obj: Record<string, unknown>): void {
  stringListAt(report, childPath(path, "destinationSubnets"), obj.destinationSubnets, checkIpSubnet);
  const sourceSubnet = stringAt(report, childPath(path, "sourceSubnet"), obj.sourceSubnet);
  if (sourceSubnet) {
    const problem = checkIpSubnet(sourceSubnet);
    if (problem) report.error(childPath(path, "sourceSubnet"), problem);
  }
  matchPortAt(report, childPath(path, "port"), obj.port);
  sourceConditionsAt(report, path, obj, false);
}

/** Validates L4MatchAttributes of a TCP route. */
export function l4MatchAt(report: ValidationReport, path: string, value: unknown): void {
  const obj = objectAt(report, path, value, L4_MATCH_FIELDS);
  if (obj !== undefined) l4ConditionsAt(report, path, obj);
}

/**
 * Validates TLSMatchAttributes: at least one SNI host, each a wildcard domain or IP that is covered by
 * one of the virtual service's `hosts`.
 */
export function tlsMatchAt(
  report: ValidationReport,
  path: string,
  value: unknown,
  hosts: readonly string[],
): void {
  const obj = objectAt(report, path, value, ["sniHosts", ...L4_MATCH_FIELDS]);
  if (obj === undefined) return;
  const sniPath = childPath(path, "sniHosts");
  const sniHosts = stringListAt(report, sniPath, obj.sniHosts, (sni) => {
    const problem = checkWildcardDomain(sni);
    if (problem && !isIp(sni)) return problem;
    if (!hosts.some((h) => hostSubsetOf(sni, h))) {
      return `SNI host "${sni}" is not covered by any of the virtual service hosts [${hosts.join(", ")}]`;
    }
    return undefined;
  });
  if (sniHosts.length === 0) report.error(sniPath, "a TLS match must have at least one SNI host");
  l4ConditionsAt(report, path, obj);
}
