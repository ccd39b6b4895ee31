/**
 * Access logging and tracing of generated listeners, as the reference generates them from the mesh config and
 * the proxy's own ProxyConfig:
 *
 * - `accessLogFile` set: a file access log on every HTTP connection manager and TCP proxy, and one on every
 *   listener for connections no filter chain logged (response flag `NR`), unless `disableEnvoyListenerLog`;
 *   `accessLogEncoding` picks text or JSON, `accessLogFormat` replaces the reference's default format.
 * - `enableEnvoyAccessLogService`: the same three places stream to the gRPC access log service through the
 *   `envoy_accesslog_service` cluster of the proxy's bootstrap.
 * - `enableTracing`: every HTTP connection manager traces, sampling `tracing.sampling` of the proxy's
 *   ProxyConfig (node metadata `PROXY_CONFIG`, else the mesh's `defaultConfig`) or `DISCOVERY_TRACE_SAMPLING`,
 *   with the mesh's own tags and the ProxyConfig's custom tags. The tracer itself is in the bootstrap.
 *
 * What a listener reads of all this is a {@link ListenerTelemetry}: small, frozen, part of the listener plans
 * that are the cache keys, and the same object for every proxy without a ProxyConfig of its own.
 *
 * @module
 */
import { TYPE_URL } from "@mesh/proto/type_urls";
import { type JsonObject, jsonToStruct } from "@mesh/proto/struct_json";
import type { Proxy } from "../../model/proxy.ts";
import type { PushContext } from "../../push/push_context.ts";
import { derivedTable } from "../../push/derived_memo.ts";
import type { EnvoyObject } from "../route_match.ts";
import { jsonObjectOf } from "@mesh/shared/config/mesh/mesh_config_schema";

/** The reference's text access log format since its 1.9 proxies. */
export const DEFAULT_TEXT_ACCESS_LOG_FORMAT =
  '[%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% ' +
  '%PROTOCOL%" %RESPONSE_CODE% %RESPONSE_FLAGS% %RESPONSE_CODE_DETAILS% %CONNECTION_TERMINATION_DETAILS% ' +
  '"%UPSTREAM_TRANSPORT_FAILURE_REASON%" %BYTES_RECEIVED% %BYTES_SENT% ' +
  '%DURATION% %RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)% "%REQ(X-FORWARDED-FOR)%" ' +
  '"%REQ(USER-AGENT)%" "%REQ(X-REQUEST-ID)%" "%REQ(:AUTHORITY)%" "%UPSTREAM_HOST%" ' +
  "%UPSTREAM_CLUSTER% %UPSTREAM_LOCAL_ADDRESS% %DOWNSTREAM_LOCAL_ADDRESS% " +
  "%DOWNSTREAM_REMOTE_ADDRESS% %REQUESTED_SERVER_NAME% %ROUTE_NAME%\n";

/** The reference's JSON access log fields since its 1.9 proxies. */
export const DEFAULT_JSON_ACCESS_LOG_FORMAT: Readonly<Record<string, string>> = Object.freeze({
  start_time: "%START_TIME%",
  route_name: "%ROUTE_NAME%",
  method: "%REQ(:METHOD)%",
  path: "%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%",
  protocol: "%PROTOCOL%",
  response_code: "%RESPONSE_CODE%",
  response_flags: "%RESPONSE_FLAGS%",
  response_code_details: "%RESPONSE_CODE_DETAILS%",
  connection_termination_details: "%CONNECTION_TERMINATION_DETAILS%",
  bytes_received: "%BYTES_RECEIVED%",
  bytes_sent: "%BYTES_SENT%",
  duration: "%DURATION%",
  upstream_service_time: "%RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)%",
  x_forwarded_for: "%REQ(X-FORWARDED-FOR)%",
  user_agent: "%REQ(USER-AGENT)%",
  request_id: "%REQ(X-REQUEST-ID)%",
  authority: "%REQ(:AUTHORITY)%",
  upstream_host: "%UPSTREAM_HOST%",
  upstream_cluster: "%UPSTREAM_CLUSTER%",
  upstream_local_address: "%UPSTREAM_LOCAL_ADDRESS%",
  downstream_local_address: "%DOWNSTREAM_LOCAL_ADDRESS%",
  downstream_remote_address: "%DOWNSTREAM_REMOTE_ADDRESS%",
  requested_server_name: "%REQUESTED_SERVER_NAME%",
  upstream_transport_failure_reason: "%UPSTREAM_TRANSPORT_FAILURE_REASON%",
});

/** The cluster of the proxy's bootstrap that reaches the gRPC access log service. */
export const ACCESS_LOG_SERVICE_CLUSTER = "envoy_accesslog_service";

/** Filter state the metadata exchange leaves, streamed to the access log service as the reference does. */
const PEER_STATE = [
  "wasm.upstream_peer",
  "wasm.upstream_peer_id",
  "wasm.downstream_peer",
  "wasm.downstream_peer_id",
];

/** One span tag: a fixed value, an environment variable of the proxy, or a request header. */
export type TraceTag =
  | { readonly tag: string; readonly literal: string }
  | { readonly tag: string; readonly environment: string; readonly defaultValue: string }
  | { readonly tag: string; readonly header: string; readonly defaultValue: string };

/** What a listener's filters log and trace; part of the listener plans, so it is part of their cache keys. */
export interface ListenerTelemetry {
  /** `accessLogFile`, `accessLogEncoding`, `accessLogFormat`; absent when no file is set. */
  readonly file?: { readonly path: string; readonly encoding: "TEXT" | "JSON"; readonly format: string };
  /** `enableEnvoyAccessLogService`. */
  readonly service: boolean;
  /** Listener-level logs of connections no chain logged; false with `disableEnvoyListenerLog`. */
  readonly listenerLog: boolean;
  /** The `metadata_exchange` plugin: peers exchange workload metadata on HTTP chains. */
  readonly metadataExchange?: boolean;
  /** The plugin and `DISCOVERY_ENABLE_TCP_METADATA_EXCHANGE`: peers exchange workload metadata on TCP chains. */
  readonly tcpMetadataExchange?: boolean;
  /** The connection managers' tracing; absent when `enableTracing` is off. */
  readonly tracing?: {
    readonly sampling: number;
    readonly maxPathTagLength?: number;
    readonly tags: readonly TraceTag[];
  };
}

/** The tags the reference adds to every span when its own tags are on (the default). */
const MESH_TAGS: readonly TraceTag[] = [
  { tag: "mesh.canonical_revision", environment: "CANONICAL_REVISION", defaultValue: "latest" },
  { tag: "mesh.canonical_service", environment: "CANONICAL_SERVICE", defaultValue: "unknown" },
  { tag: "mesh.mesh_id", environment: "MESH_META_MESH_ID", defaultValue: "unknown" },
  { tag: "mesh.namespace", environment: "POD_NAMESPACE", defaultValue: "default" },
];

/** Tracing settings of a ProxyConfig, as far as listeners read them. */
interface TracingConfig {
  readonly sampling?: number;
  readonly maxPathTagLength?: number;
  readonly customTags?: Readonly<Record<string, unknown>>;
}

const SHARED = derivedTable<PushContext, string, ListenerTelemetry>("listener-telemetry");

/**
 * The telemetry of `proxy`'s listeners: one frozen object per snapshot for each distinct tracing setting the
 * proxies send (most send none, or the mesh's own), so proxies that read alike share one object and one shape.
 */
export function listenerTelemetry(proxy: Proxy, push: PushContext): ListenerTelemetry {
  const own = push.mesh.enableTracing === false ? undefined : proxyTracing(proxy);
  // Only the fields listeners read tell two proxies' tracing apart.
  const key = own === undefined ? "" : JSON.stringify([own.sampling, own.maxPathTagLength, own.customTags]);
  return push.derived.get(
    SHARED,
    push.configSnapshot,
    key,
    () => telemetryOf(push, own ?? meshTracing(push)),
  );
}

function meshTracing(push: PushContext): TracingConfig | undefined {
  return push.mesh.defaultConfig?.tracing;
}

/** The `tracing` of the ProxyConfig the agent sent as node metadata `PROXY_CONFIG` (checked), when it has one. */
function proxyTracing(proxy: Proxy): TracingConfig | undefined {
  return proxy.metadata.tracing;
}

function telemetryOf(push: PushContext, tracing: TracingConfig | undefined): ListenerTelemetry {
  const mesh = push.mesh;
  return Object.freeze({
    ...(mesh.accessLogFile
      ? {
        file: Object.freeze({
          path: mesh.accessLogFile,
          encoding: mesh.accessLogEncoding ?? "TEXT",
          format: mesh.accessLogFormat ?? "",
        }),
      }
      : {}),
    service: mesh.enableEnvoyAccessLogService === true,
    listenerLog: mesh.disableEnvoyListenerLog !== true,
    ...(push.plugins.metadataExchange ? { metadataExchange: true } : {}),
    ...(push.plugins.metadataExchange && push.tcpMetadataExchange ? { tcpMetadataExchange: true } : {}),
    ...(mesh.enableTracing === false
      ? {}
      : { tracing: Object.freeze(tracingOf(tracing, push.traceSampling)) }),
  });
}

function tracingOf(config: TracingConfig | undefined, defaultSampling: number): ListenerTelemetry["tracing"] {
  // Like the reference: an unset or zero sampling takes the server's; one above 100 falls back to 1 %.
  const own = typeof config?.sampling === "number" && config.sampling !== 0 ? config.sampling : undefined;
  const sampling = own === undefined ? defaultSampling : own > 100 ? 1 : own;
  const custom = Object.entries(config?.customTags ?? {}).flatMap(([tag, value]) => customTag(tag, value));
  const tags = [...MESH_TAGS, ...custom].sort((a, b) => a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0);
  const maxPath = config?.maxPathTagLength;
  return {
    sampling,
    ...(typeof maxPath === "number" && maxPath > 0 ? { maxPathTagLength: maxPath } : {}),
    tags,
  };
}

function customTag(tag: string, value: unknown): TraceTag[] {
  if (typeof value !== "object" || value === null) return [];
  const { literal, environment, header } = value as Record<string, Record<string, unknown> | undefined>;
  if (literal) return [{ tag, literal: String(literal.value ?? "") }];
  if (environment) {
    return [{
      tag,
      environment: String(environment.name ?? ""),
      defaultValue: String(environment.defaultValue ?? ""),
    }];
  }
  if (header) {
    return [{ tag, header: String(header.name ?? ""), defaultValue: String(header.defaultValue ?? "") }];
  }
  return [];
}

/** The name of both metadata exchange filters, as the reference names them. */
export const METADATA_EXCHANGE_FILTER = "istio.metadata_exchange";

/** The HTTP metadata exchange filter (the proxy's built-in Wasm extension), when the plugin is on. */
export function httpMetadataExchange(telemetry: ListenerTelemetry | undefined): EnvoyObject[] {
  if (telemetry?.metadataExchange !== true) return [];
  return [{
    name: METADATA_EXCHANGE_FILTER,
    typed_config: {
      "@type": TYPE_URL.wasmHttp,
      config: {
        vm_config: {
          runtime: "envoy.wasm.runtime.null",
          code: { local: { inline_string: "envoy.wasm.metadata_exchange" } },
        },
        configuration: { "@type": TYPE_URL.stringValue, value: "{}\n" },
      },
    },
  }];
}

/** The TCP metadata exchange filter, ahead of a mesh TCP proxy, when the plugin and the setting are on. */
export function tcpMetadataExchange(telemetry: ListenerTelemetry | undefined): EnvoyObject[] {
  if (telemetry?.tcpMetadataExchange !== true) return [];
  return [{
    name: METADATA_EXCHANGE_FILTER,
    typed_config: {
      "@type": TYPE_URL.typedStruct,
      type_url: "type.googleapis.com/envoy.tcp.metadataexchange.config.MetadataExchange",
      value: jsonToStruct({ protocol: "istio-peer-exchange" }),
    },
  }];
}

/** The access logs of an HTTP connection manager. */
export function httpAccessLogs(telemetry: ListenerTelemetry | undefined): EnvoyObject[] {
  if (telemetry === undefined) return [];
  return [
    ...(telemetry.file ? [fileAccessLog(telemetry.file)] : []),
    ...(telemetry.service ? [serviceAccessLog("http")] : []),
  ];
}

/** The access logs of a TCP proxy. */
export function tcpAccessLogs(telemetry: ListenerTelemetry | undefined): EnvoyObject[] {
  if (telemetry === undefined) return [];
  return [
    ...(telemetry.file ? [fileAccessLog(telemetry.file)] : []),
    ...(telemetry.service ? [serviceAccessLog("tcp")] : []),
  ];
}

/** The `access_log` field of a listener: connections no route was found for (`NR`), when logging is on. */
export function listenerAccessLog(telemetry: ListenerTelemetry | undefined): EnvoyObject {
  if (telemetry === undefined || !telemetry.listenerLog) return {};
  const noRoute = { response_flag_filter: { flags: ["NR"] } };
  const logs = [
    ...(telemetry.file ? [{ ...fileAccessLog(telemetry.file), filter: noRoute }] : []),
    ...(telemetry.service ? [{ ...serviceAccessLog("listener"), filter: noRoute }] : []),
  ];
  return logs.length > 0 ? { access_log: logs } : {};
}

/** The `tracing` field of an HTTP connection manager, when tracing is on. */
export function connectionManagerTracing(telemetry: ListenerTelemetry | undefined): EnvoyObject {
  const tracing = telemetry?.tracing;
  if (tracing === undefined) return {};
  return {
    tracing: {
      client_sampling: { value: 100 },
      random_sampling: { value: tracing.sampling },
      overall_sampling: { value: 100 },
      ...(tracing.tags.length > 0 ? { custom_tags: tracing.tags.map(envoyTag) } : {}),
      ...(tracing.maxPathTagLength ? { max_path_tag_length: { value: tracing.maxPathTagLength } } : {}),
    },
  };
}

function envoyTag(tag: TraceTag): EnvoyObject {
  if ("literal" in tag) return { tag: tag.tag, literal: { value: tag.literal } };
  if ("environment" in tag) {
    return { tag: tag.tag, environment: { name: tag.environment, default_value: tag.defaultValue } };
  }
  return { tag: tag.tag, request_header: { name: tag.header, default_value: tag.defaultValue } };
}

function fileAccessLog(file: NonNullable<ListenerTelemetry["file"]>): EnvoyObject {
  return {
    name: "envoy.access_loggers.file",
    typed_config: {
      "@type": TYPE_URL.fileAccessLog,
      path: file.path,
      log_format: file.encoding === "JSON"
        ? { json_format: jsonToStruct(jsonFormat(file.format)) }
        : { text_format: file.format === "" ? DEFAULT_TEXT_ACCESS_LOG_FORMAT : file.format },
    },
  };
}

/** The JSON format's fields; the mesh config's validation refuses a format that is not a JSON object. */
function jsonFormat(format: string): JsonObject {
  // A validated mesh config holds a JSON object; the default keeps a proxy logging otherwise, as the reference.
  return (format === "" ? undefined : jsonObjectOf(format) as JsonObject | undefined) ??
    { ...DEFAULT_JSON_ACCESS_LOG_FORMAT };
}

function serviceAccessLog(kind: "http" | "tcp" | "listener"): EnvoyObject {
  const common = {
    log_name: `${kind}_envoy_accesslog`,
    grpc_service: { envoy_grpc: { cluster_name: ACCESS_LOG_SERVICE_CLUSTER } },
    transport_api_version: "V3",
    filter_state_objects_to_log: PEER_STATE,
  };
  return kind === "http"
    ? {
      name: "envoy.access_loggers.http_grpc",
      typed_config: { "@type": TYPE_URL.httpGrpcAccessLog, common_config: common },
    }
    : {
      name: "envoy.access_loggers.tcp_grpc",
      typed_config: { "@type": TYPE_URL.tcpGrpcAccessLog, common_config: common },
    };
}
