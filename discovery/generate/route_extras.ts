/**
 * The parts of an Envoy route that only Envoy proxies act on, from a VirtualService HTTP route: the redirect
 * action, request mirroring, the CORS policy and request/response header manipulation. gRPC clients are
 * never planned redirects or mirrors (they fail RPCs on a redirect, gRFC A28); CORS and headers are ignored by
 * them.
 *
 * @module
 */
import type { HeaderOperations, Headers } from "@mesh/shared/config/networking/header_operations";
import type {
  CorsPolicy,
  HTTPRedirect,
  Percent,
} from "@mesh/shared/config/networking/virtual_service_policies";
import { durationOf } from "./envoy_duration.ts";
import { fractionalPercent } from "./route_action.ts";
import { type EnvoyObject, stringMatcher } from "./route_match.ts";

/** Envoy's RedirectResponseCode for each redirect status a VirtualService may give. */
const REDIRECT_CODES: Readonly<Record<number, string>> = Object.freeze({
  301: "MOVED_PERMANENTLY",
  302: "FOUND",
  303: "SEE_OTHER",
  307: "TEMPORARY_REDIRECT",
  308: "PERMANENT_REDIRECT",
});

/**
 * Envoy's RedirectAction: the path and authority replaced as given, the status 301 unless another 3xx that
 * Envoy can send is asked for.
 *
 * @throws {RangeError} for a status Envoy cannot send (validation admits only these)
 */
export function redirectAction(redirect: HTTPRedirect): EnvoyObject {
  const code = redirect.redirectCode ?? 301;
  const responseCode = REDIRECT_CODES[code];
  if (responseCode === undefined) {
    throw new RangeError(`redirectCode ${code}: expected one of ${Object.keys(REDIRECT_CODES).join(", ")}`);
  }
  return {
    ...(redirect.uri ? { path_redirect: redirect.uri } : {}),
    ...(redirect.authority ? { host_redirect: redirect.authority } : {}),
    response_code: responseCode,
  };
}

/** The mirror policy of a route: a copy of `share` of requests (all when unset) sent to `cluster`. */
export function mirrorPolicies(cluster: string, share: Percent | undefined, percent?: number): EnvoyObject[] {
  return [{ cluster, runtime_fraction: { default_value: fractionalPercent(share, percent) } }];
}

/** Envoy's CorsPolicy for a VirtualService's; origins from `allowOrigins` and the deprecated `allowOrigin`. */
export function corsPolicy(cors: CorsPolicy): EnvoyObject {
  const origins = [
    ...(cors.allowOrigins ?? []).map(stringMatcher).filter((m) => m !== undefined),
    ...(cors.allowOrigin ?? []).map((exact) => ({ exact })),
  ];
  const maxAge = durationOf(cors.maxAge);
  return {
    ...(origins.length > 0 ? { allow_origin_string_match: origins } : {}),
    ...(cors.allowMethods?.length ? { allow_methods: cors.allowMethods.join(",") } : {}),
    ...(cors.allowHeaders?.length ? { allow_headers: cors.allowHeaders.join(",") } : {}),
    ...(cors.exposeHeaders?.length ? { expose_headers: cors.exposeHeaders.join(",") } : {}),
    ...(maxAge !== undefined ? { max_age: String(Number(maxAge.seconds ?? "0")) } : {}),
    ...(cors.allowCredentials !== undefined ? { allow_credentials: { value: cors.allowCredentials } } : {}),
  };
}

function headerOptions(ops: HeaderOperations | undefined): EnvoyObject[] {
  const option = (key: string, value: string, action: string) => ({
    header: { key, value },
    append_action: action,
  });
  return [
    ...Object.entries(ops?.set ?? {}).map(([k, v]) => option(k, v, "OVERWRITE_IF_EXISTS_OR_ADD")),
    ...Object.entries(ops?.add ?? {}).map(([k, v]) => option(k, v, "APPEND_IF_EXISTS_OR_ADD")),
  ];
}

/** The Route fields of a VirtualService route's `headers`: `set` overwrites, `add` appends, `remove` removes. */
export function headerFields(headers: Headers | undefined): EnvoyObject {
  const requestAdd = headerOptions(headers?.request);
  const responseAdd = headerOptions(headers?.response);
  return {
    ...(requestAdd.length ? { request_headers_to_add: requestAdd } : {}),
    ...(headers?.request?.remove?.length ? { request_headers_to_remove: [...headers.request.remove] } : {}),
    ...(responseAdd.length ? { response_headers_to_add: responseAdd } : {}),
    ...(headers?.response?.remove?.length
      ? { response_headers_to_remove: [...headers.response.remove] }
      : {}),
  };
}
