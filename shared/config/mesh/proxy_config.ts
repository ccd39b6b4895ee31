import type { ClientTLSSettings } from "../networking/tls_settings.ts";

/** How inbound traffic is captured into the proxy. */
export type InterceptionMode = "REDIRECT" | "TPROXY" | "NONE";

/** Whether the proxy authenticates the control plane with mutual TLS. */
export type AuthenticationPolicy = "NONE" | "MUTUAL_TLS";

/** How a gateway forwards the client certificate details header (`x-forwarded-client-cert`). */
export type ForwardClientCertDetails =
  | "UNDEFINED"
  | "SANITIZE"
  | "FORWARD_ONLY"
  | "APPEND_FORWARD"
  | "SANITIZE_SET"
  | "ALWAYS_FORWARD_ONLY";

/** TCP keepalive settings of a connection. */
export interface TcpKeepalive {
  readonly probes?: number;
  /** Idle time before the first probe, in nanoseconds. */
  readonly time?: bigint;
  /** Time between probes, in nanoseconds. */
  readonly interval?: bigint;
}

/** A gRPC service the proxy streams to (access logs, metrics). */
export interface RemoteService {
  /** `host:port`. */
  readonly address?: string;
  readonly tlsSettings?: ClientTLSSettings;
  readonly tcpKeepalive?: TcpKeepalive;
}

/** Trace header propagation formats of the OpenCensus agent tracer. */
export type TraceContext = "UNSPECIFIED" | "W3C_TRACE_CONTEXT" | "GRPC_BIN" | "CLOUD_TRACE_CONTEXT" | "B3";

/** A custom tag added to trace spans: a literal, an environment variable or a request header. */
export interface CustomTag {
  readonly literal?: { readonly value?: string };
  readonly environment?: { readonly name?: string; readonly defaultValue?: string };
  readonly header?: { readonly name?: string; readonly defaultValue?: string };
}

/** The tracer the proxy reports spans to (at most one of the tracer fields). */
export interface Tracing {
  readonly zipkin?: { readonly address?: string };
  readonly lightstep?: { readonly address?: string; readonly accessToken?: string };
  readonly datadog?: { readonly address?: string };
  readonly stackdriver?: {
    readonly debug?: boolean;
    readonly maxNumberOfAttributes?: number;
    readonly maxNumberOfAnnotations?: number;
    readonly maxNumberOfMessageEvents?: number;
  };
  readonly openCensusAgent?: { readonly address?: string; readonly context?: readonly TraceContext[] };
  readonly customTags?: Readonly<Record<string, CustomTag>>;
  readonly maxPathTagLength?: number;
  /** Percentage of requests traced, 0.0 to 100.0. */
  readonly sampling?: number;
  readonly tlsSettings?: ClientTLSSettings;
}

/** Gateway network topology: trusted proxies in front of it and client certificate forwarding. */
export interface Topology {
  readonly numTrustedProxies?: number;
  readonly forwardClientCertDetails?: ForwardClientCertDetails;
}

/** Extra proxy statistics to keep, by name prefix, suffix or regular expression. */
export interface ProxyStatsMatcher {
  readonly inclusionPrefixes?: readonly string[];
  readonly inclusionSuffixes?: readonly string[];
  readonly inclusionRegexps?: readonly string[];
}

/**
 * How a proxy runs (Istio 1.9's `ProxyConfig`): `defaultConfig` of the mesh config, overridden per workload.
 * Durations are nanoseconds.
 */
export interface ProxyConfig {
  readonly configPath: string;
  readonly binaryPath: string;
  readonly serviceCluster: string;
  readonly drainDuration: bigint;
  readonly parentShutdownDuration: bigint;
  readonly discoveryAddress: string;
  readonly statsdUdpAddress?: string;
  readonly proxyAdminPort: number;
  readonly controlPlaneAuthPolicy: AuthenticationPolicy;
  readonly customConfigFile?: string;
  readonly statNameLength: number;
  readonly concurrency: number;
  readonly proxyBootstrapTemplatePath?: string;
  readonly interceptionMode: InterceptionMode;
  readonly tracing?: Tracing;
  readonly envoyAccessLogService?: RemoteService;
  readonly envoyMetricsService?: RemoteService;
  /** Environment variables of the agent (`MESH_META_*` and others). */
  readonly proxyMetadata: Readonly<Record<string, string>>;
  readonly statusPort: number;
  readonly extraStatTags: readonly string[];
  readonly gatewayTopology?: Topology;
  readonly terminationDrainDuration: bigint;
  readonly meshId?: string;
  readonly proxyStatsMatcher?: ProxyStatsMatcher;
  readonly holdApplicationUntilProxyStarts: boolean;
  readonly caCertificatesPem: readonly string[];
}

const SECOND = 1_000_000_000n;

/** The proxy config every workload starts from (Istio 1.9's `DefaultProxyConfig`, renamed). */
export function defaultProxyConfig(): ProxyConfig {
  return {
    configPath: "./etc/mesh/proxy",
    binaryPath: "/usr/local/bin/envoy",
    serviceCluster: "mesh-proxy",
    drainDuration: 45n * SECOND,
    parentShutdownDuration: 60n * SECOND,
    discoveryAddress: "meshd.mesh-system.svc:15012",
    proxyAdminPort: 15000,
    controlPlaneAuthPolicy: "MUTUAL_TLS",
    statNameLength: 189,
    concurrency: 2,
    interceptionMode: "REDIRECT",
    tracing: { zipkin: { address: "zipkin.mesh-system:9411" } },
    proxyMetadata: {},
    statusPort: 15020,
    extraStatTags: [],
    terminationDrainDuration: 5n * SECOND,
    holdApplicationUntilProxyStarts: false,
    caCertificatesPem: [],
  };
}

/**
 * Applies a partial proxy config over `base` as Istio does: each field set replaces the base's (messages
 * such as `tracing` as a whole), except `proxyMetadata`, whose entries are merged.
 */
export function mergeProxyConfig(base: ProxyConfig, override: Partial<ProxyConfig>): ProxyConfig {
  return {
    ...base,
    ...override,
    proxyMetadata: { ...base.proxyMetadata, ...(override.proxyMetadata ?? {}) },
  };
}
