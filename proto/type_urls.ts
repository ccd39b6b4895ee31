/**
 * Every type URL the control plane sends or reads, in one place.
 *
 * @module
 */

const PREFIX = "type.googleapis.com/";

/** Type URLs of the xDS resource types and the typed configs embedded in them. */
export const TYPE_URL = {
  cluster: `${PREFIX}envoy.config.cluster.v3.Cluster`,
  endpoint: `${PREFIX}envoy.config.endpoint.v3.ClusterLoadAssignment`,
  listener: `${PREFIX}envoy.config.listener.v3.Listener`,
  route: `${PREFIX}envoy.config.route.v3.RouteConfiguration`,
  secret: `${PREFIX}envoy.extensions.transport_sockets.tls.v3.Secret`,
  httpConnectionManager:
    `${PREFIX}envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager`,
  router: `${PREFIX}envoy.extensions.filters.http.router.v3.Router`,
  fault: `${PREFIX}envoy.extensions.filters.http.fault.v3.HTTPFault`,
  cors: `${PREFIX}envoy.extensions.filters.http.cors.v3.Cors`,
  tcpProxy: `${PREFIX}envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy`,
  redisProxy: `${PREFIX}envoy.extensions.filters.network.redis_proxy.v3.RedisProxy`,
  mysqlProxy: `${PREFIX}envoy.config.filter.network.mysql_proxy.v1alpha1.MySQLProxy`,
  thriftProxy: `${PREFIX}envoy.extensions.filters.network.thrift_proxy.v3.ThriftProxy`,
  sniCluster: `${PREFIX}envoy.extensions.filters.network.sni_cluster.v3.SniCluster`,
  rbacNetwork: `${PREFIX}envoy.extensions.filters.network.rbac.v3.RBAC`,
  rbacHttp: `${PREFIX}envoy.extensions.filters.http.rbac.v3.RBAC`,
  jwtAuthn: `${PREFIX}envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication`,
  tlsInspector: `${PREFIX}envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector`,
  httpInspector: `${PREFIX}envoy.extensions.filters.listener.http_inspector.v3.HttpInspector`,
  originalDst: `${PREFIX}envoy.extensions.filters.listener.original_dst.v3.OriginalDst`,
  upstreamTlsContext: `${PREFIX}envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext`,
  downstreamTlsContext: `${PREFIX}envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext`,
  rawBuffer: `${PREFIX}envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer`,
  fileAccessLog: `${PREFIX}envoy.extensions.access_loggers.file.v3.FileAccessLog`,
  httpGrpcAccessLog: `${PREFIX}envoy.extensions.access_loggers.grpc.v3.HttpGrpcAccessLogConfig`,
  tcpGrpcAccessLog: `${PREFIX}envoy.extensions.access_loggers.grpc.v3.TcpGrpcAccessLogConfig`,
  httpProtocolOptions: `${PREFIX}envoy.extensions.upstreams.http.v3.HttpProtocolOptions`,
  typedStruct: `${PREFIX}udpa.type.v1.TypedStruct`,
  wasmHttp: `${PREFIX}envoy.extensions.filters.http.wasm.v3.Wasm`,
  stringValue: `${PREFIX}google.protobuf.StringValue`,
} as const;

const SHORT_NAMES: ReadonlyMap<string, string> = new Map([
  [TYPE_URL.cluster, "CDS"],
  [TYPE_URL.endpoint, "EDS"],
  [TYPE_URL.listener, "LDS"],
  [TYPE_URL.route, "RDS"],
  [TYPE_URL.secret, "SDS"],
]);

/** Returns "CDS", "EDS", "LDS", "RDS" or "SDS" for an xDS resource type URL, and any other URL unchanged. */
export function shortTypeName(typeUrl: string): string {
  return SHORT_NAMES.get(typeUrl) ?? typeUrl;
}

/** Returns the fully qualified message name a type URL points at (the part after the last "/"). */
export function typeNameOf(typeUrl: string): string {
  return typeUrl.slice(typeUrl.lastIndexOf("/") + 1);
}

/** Returns the `type.googleapis.com/` type URL of a fully qualified message name; drops a leading "." */
export function typeUrlOf(typeName: string): string {
  return PREFIX + (typeName.startsWith(".") ? typeName.slice(1) : typeName);
}
