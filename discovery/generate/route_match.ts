/**
 * VirtualService HTTP match conditions as Envoy `RouteMatch` objects, and the rule for which conditions apply
 * to a given proxy and port. Written for gRPC's xDS client, which supports path (prefix, exact, RE2 regex) and
 * header (exact, prefix, regex, present, inverted) matching; query parameter matchers are emitted faithfully
 * (a gRPC client never matches a route that has them, as gRFC A28 prescribes).
 *
 * @module
 */
import type { HTTPMatchRequest } from "@mesh/shared/config/networking/virtual_service_match";
import type { StringMatch } from "@mesh/shared/config/networking/string_match";
import { MESH_GATEWAY } from "@mesh/shared/config/networking/gateway_names";
import { selectorMatches } from "../model/labels.ts";
import type { Proxy } from "../model/proxy.ts";

/** A plain-object Envoy message for `encodeAny` (`.proto` field names). */
export type EnvoyObject = Record<string, unknown>;

/** An RE2 `RegexMatcher`. The deprecated `google_re2` engine is set so older gRPC clients accept it too. */
export function regexMatcher(regex: string): EnvoyObject {
  return { google_re2: {}, regex };
}

/** A `StringMatcher` for a StringMatch that sets exact, prefix or a non-empty regex; undefined otherwise. */
export function stringMatcher(match: StringMatch): EnvoyObject | undefined {
  if (match.exact !== undefined) return { exact: match.exact };
  if (match.prefix !== undefined && match.prefix !== "") return { prefix: match.prefix };
  if (match.regex !== undefined && match.regex !== "") return { safe_regex: regexMatcher(match.regex) };
  return undefined;
}

/**
 * A `HeaderMatcher`: exact, prefix or regex as written; an empty match (`{}`, or an empty prefix or regex, which
 * Envoy's rules forbid) tests presence. `invert` negates it (`withoutHeaders`).
 */
export function headerMatcher(name: string, match: StringMatch, invert = false): EnvoyObject {
  const inverted = invert ? { invert_match: true } : {};
  if (match.exact !== undefined) return { name, exact_match: match.exact, ...inverted };
  if (match.prefix !== undefined && match.prefix !== "") {
    return { name, prefix_match: match.prefix, ...inverted };
  }
  if (match.regex !== undefined && match.regex !== "") {
    return { name, safe_regex_match: regexMatcher(match.regex), ...inverted };
  }
  return { name, present_match: true, ...inverted };
}

/** A `QueryParameterMatcher`: a string match, or presence for an empty one. */
export function queryParameterMatcher(name: string, match: StringMatch): EnvoyObject {
  const string = stringMatcher(match);
  return string === undefined ? { name, present_match: true } : { name, string_match: string };
}

/** The path part of a RouteMatch: exact → `path`, prefix → `prefix`, regex → `safe_regex`, none → prefix `/`. */
function pathSpecifier(uri: StringMatch | undefined): EnvoyObject {
  if (uri?.exact !== undefined) return { path: uri.exact };
  if (uri?.prefix !== undefined && uri.prefix !== "") return { prefix: uri.prefix };
  if (uri?.regex !== undefined && uri.regex !== "") return { safe_regex: regexMatcher(uri.regex) };
  return { prefix: "/" };
}

const PSEUDO_HEADERS = [["method", ":method"], ["authority", ":authority"], ["scheme", ":scheme"]] as const;

/** The Envoy RouteMatch of one HTTP match condition (or of a route without conditions: every path). */
export function routeMatch(match: HTTPMatchRequest | undefined): EnvoyObject {
  const out: EnvoyObject = pathSpecifier(match?.uri);
  if (match === undefined) return out;
  if (match.ignoreUriCase) out.case_sensitive = { value: false };
  const headers: EnvoyObject[] = [];
  for (const [field, header] of PSEUDO_HEADERS) {
    const value = match[field];
    if (value !== undefined) headers.push(headerMatcher(header, value));
  }
  for (const [name, value] of Object.entries(match.headers ?? {})) headers.push(headerMatcher(name, value));
  for (const [name, value] of Object.entries(match.withoutHeaders ?? {})) {
    headers.push(headerMatcher(name, value, true));
  }
  if (headers.length > 0) out.headers = headers;
  const query = Object.entries(match.queryParams ?? {}).map(([name, value]) =>
    queryParameterMatcher(name, value)
  );
  if (query.length > 0) out.query_parameters = query;
  return out;
}

/**
 * True when a match condition can apply to traffic from `proxy` to service port `port` in the mesh: its port (if
 * any) is that port, its gateways (if any) include `mesh`, and the proxy has its source labels and namespace.
 * Conditions that fail this are dropped from the proxy's routes, as Istio does for sidecars.
 */
export function matchApplies(
  match: HTTPMatchRequest,
  proxy: Proxy,
  port: number,
  gatewayNames: readonly string[] = [MESH_GATEWAY],
): boolean {
  if (match.port !== undefined && match.port !== 0 && match.port !== port) return false;
  if (
    match.gateways !== undefined && match.gateways.length > 0 &&
    !match.gateways.some((g) => gatewayNames.includes(g))
  ) {
    return false;
  }
  if (
    match.sourceNamespace !== undefined && match.sourceNamespace !== "" &&
    match.sourceNamespace !== proxy.namespace
  ) {
    return false;
  }
  return selectorMatches(match.sourceLabels, proxy.metadata.labels);
}
