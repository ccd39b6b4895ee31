/**
 * The connection-level Cluster fields of a DestinationRule's connection pool for Envoy sidecars: HTTP/2 to
 * gRPC and HTTP/2 ports, HTTP idle timeout and requests per connection, TCP keepalive.
 *
 * @module
 */
import type { ConnectionPoolSettings } from "@mesh/shared/config/networking/traffic_policy";
import { TYPE_URL } from "@mesh/proto/type_urls";
import type { ServiceProtocol } from "../../model/service.ts";
import { durationOf } from "../envoy_duration.ts";
import type { EnvoyObject } from "../route_match.ts";

/** The extension name under which Envoy reads upstream HTTP protocol options. */
export const HTTP_PROTOCOL_OPTIONS_NAME = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions";

/** True for ports whose upstream connections must speak HTTP/2. */
export function speaksHttp2(protocol: ServiceProtocol): boolean {
  return protocol === "GRPC" || protocol === "HTTP2" || protocol === "GRPC-Web";
}

/**
 * `typed_extension_protocol_options` and `upstream_connection_options` for a port's protocol and pool;
 * empty when nothing differs from Envoy's defaults.
 */
export function connectionFields(
  protocol: ServiceProtocol,
  pool: ConnectionPoolSettings | undefined,
): EnvoyObject {
  const http2 = speaksHttp2(protocol) || pool?.http?.h2UpgradePolicy === "UPGRADE";
  const idle = durationOf(pool?.http?.idleTimeout);
  const perConnection = pool?.http?.maxRequestsPerConnection;
  const common: EnvoyObject = {
    ...(idle ? { idle_timeout: idle } : {}),
    ...(perConnection !== undefined && perConnection > 0
      ? { max_requests_per_connection: { value: perConnection } }
      : {}),
  };
  const out: EnvoyObject = {};
  if (http2 || Object.keys(common).length > 0) {
    out.typed_extension_protocol_options = {
      [HTTP_PROTOCOL_OPTIONS_NAME]: {
        "@type": TYPE_URL.httpProtocolOptions,
        ...(Object.keys(common).length > 0 ? { common_http_protocol_options: common } : {}),
        ...(http2
          ? { explicit_http_config: { http2_protocol_options: {} } }
          : { use_downstream_protocol_config: { http_protocol_options: {}, http2_protocol_options: {} } }),
      },
    };
  }
  const keepalive = pool?.tcp?.tcpKeepalive;
  if (keepalive !== undefined) {
    const seconds = (text: string | undefined) => {
      const d = durationOf(text);
      return d === undefined ? undefined : { value: Math.max(1, Number(d.seconds ?? "0")) };
    };
    const time = seconds(keepalive.time);
    const interval = seconds(keepalive.interval);
    out.upstream_connection_options = {
      tcp_keepalive: {
        ...(keepalive.probes ? { keepalive_probes: { value: keepalive.probes } } : {}),
        ...(time ? { keepalive_time: time } : {}),
        ...(interval ? { keepalive_interval: interval } : {}),
      },
    };
  }
  return out;
}
