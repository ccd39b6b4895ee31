/**
 * Envoy filter names as EnvoyFilter matches compare them: the canonical name (what the generators emit) also
 * matches its deprecated alias (`envoy.router`, `envoy.http_connection_manager`, …), as the reference keeps
 * both for the EnvoyFilters written before the rename (its telemetry v2 filters among them).
 *
 * @module
 */

/** Canonical filter name → its deprecated alias, as the reference's table. */
const DEPRECATED: Readonly<Record<string, string>> = {
  "envoy.filters.http.buffer": "envoy.buffer",
  "envoy.filters.http.cors": "envoy.cors",
  "envoy.filters.http.csrf": "envoy.csrf",
  "envoy.filters.http.dynamo": "envoy.http_dynamo_filter",
  "envoy.filters.http.ext_authz": "envoy.ext_authz",
  "envoy.filters.http.fault": "envoy.fault",
  "envoy.filters.http.grpc_http1_bridge": "envoy.grpc_http1_bridge",
  "envoy.filters.http.grpc_json_transcoder": "envoy.grpc_json_transcoder",
  "envoy.filters.http.grpc_web": "envoy.grpc_web",
  "envoy.filters.http.gzip": "envoy.gzip",
  "envoy.filters.http.health_check": "envoy.health_check",
  "envoy.filters.http.ip_tagging": "envoy.ip_tagging",
  "envoy.filters.http.lua": "envoy.lua",
  "envoy.filters.http.ratelimit": "envoy.rate_limit",
  "envoy.filters.http.router": "envoy.router",
  "envoy.filters.http.squash": "envoy.squash",
  "envoy.filters.listener.http_inspector": "envoy.listener.http_inspector",
  "envoy.filters.listener.original_dst": "envoy.listener.original_dst",
  "envoy.filters.listener.original_src": "envoy.listener.original_src",
  "envoy.filters.listener.proxy_protocol": "envoy.listener.proxy_protocol",
  "envoy.filters.listener.tls_inspector": "envoy.listener.tls_inspector",
  "envoy.filters.network.client_ssl_auth": "envoy.client_ssl_auth",
  "envoy.filters.network.ext_authz": "envoy.ext_authz",
  "envoy.filters.network.http_connection_manager": "envoy.http_connection_manager",
  "envoy.filters.network.mongo_proxy": "envoy.mongo_proxy",
  "envoy.filters.network.ratelimit": "envoy.ratelimit",
  "envoy.filters.network.redis_proxy": "envoy.redis_proxy",
  "envoy.filters.network.tcp_proxy": "envoy.tcp_proxy",
};

/** True when a match naming `wanted` selects the filter called `name` (either may be the deprecated alias). */
export function filterNameMatches(wanted: string, name: unknown): boolean {
  if (typeof name !== "string") return false;
  return wanted === name || DEPRECATED[name] === wanted || DEPRECATED[wanted] === name;
}
