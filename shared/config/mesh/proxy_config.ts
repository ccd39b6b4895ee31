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
  /** Unanswered probes before the connection is dropped. */
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
  /** TLS used to connect to the service. */
  readonly tlsSettings?: ClientTLSSettings;
  /** TCP keepalive of the connection to the service. */
  readonly tcpKeepalive?: TcpKeepalive;
}

/** Trace header propagation formats of the OpenCensus agent tracer. */
export type TraceContext = "UNSPECIFIED" | "W3C_TRACE_CONTEXT" | "GRPC_BIN" | "CLOUD_TRACE_CONTEXT" | "B3";

/** A custom tag added to trace spans: a literal, an environment variable or a request header. */
export interface CustomTag {
  /** A fixed tag value. */
  readonly literal?: { readonly value?: string };
  /** The value of an environment variable of the proxy, or `defaultValue` when unset. */
  readonly environment?: { readonly name?: string; readonly defaultValue?: string };
  /** The value of a request header, or `defaultValue` when absent. */
  readonly header?: { readonly name?: string; readonly defaultValue?: string };
}

/** The tracer the proxy reports spans to (at most one of the tracer fields). */
export interface Tracing {
  /** Zipkin collector, `host:port`. */
  readonly zipkin?: { readonly address?: string };
  /** Lightstep satellite pool, `host:port`, and the access token. */
  readonly lightstep?: { readonly address?: string; readonly accessToken?: string };
  /** Datadog agent, `host:port`. */
  readonly datadog?: { readonly address?: string };
  /** Stackdriver, with its debug switch and per-span limits. */
  readonly stackdriver?: {
    readonly debug?: boolean;
    readonly maxNumberOfAttributes?: number;
    readonly maxNumberOfAnnotations?: number;
    readonly maxNumberOfMessageEvents?: number;
  };
  /** OpenCensus agent, `host:port`, and the trace header formats it propagates. */
  readonly openCensusAgent?: { readonly address?: string; readonly context?: readonly TraceContext[] };
  /** Custom tags added to every span, by tag name. */
  readonly customTags?: Readonly<Record<string, CustomTag>>;
  /** Longest URL path kept in a span's tag, in characters. */
  readonly maxPathTagLength?: number;
  /** Percentage of requests traced, 0.0 to 100.0. */
  readonly sampling?: number;
  /** TLS used to connect to the tracer. */
  readonly tlsSettings?: ClientTLSSettings;
}

/** Gateway network topology: trusted proxies in front of it and client certificate forwarding. */
export interface Topology {
  /** How many trusted proxies sit in front of the gateway (read from `x-forwarded-for`). */
  readonly numTrustedProxies?: number;
  /** How the gateway forwards the client certificate details header. */
  readonly forwardClientCertDetails?: ForwardClientCertDetails;
}

/** Extra proxy statistics to keep, by name prefix, suffix or regular expression. */
export interface ProxyStatsMatcher {
  /** Stat name prefixes to keep. */
  readonly inclusionPrefixes?: readonly string[];
  /** Stat name suffixes to keep. */
  readonly inclusionSuffixes?: readonly string[];
  /** Regular expressions of stat names to keep. */
  readonly inclusionRegexps?: readonly string[];
}

/**
 * How a proxy runs (Istio 1.9's `ProxyConfig`): `defaultConfig` of the mesh config, overridden per workload.
 * Durations are nanoseconds.
 */
export interface ProxyConfig {
  /** Directory the proxy's generated bootstrap config is written to. */
  readonly configPath: string;
  /** Path of the proxy binary. */
  readonly binaryPath: string;
  /** Service cluster name the proxy reports (default `mesh-proxy`). */
  readonly serviceCluster: string;
  /** How long the proxy drains connections on a hot restart, in nanoseconds (default 45 s). */
  readonly drainDuration: bigint;
  /** How long the old proxy process lives after a hot restart, in nanoseconds (default 60 s). */
  readonly parentShutdownDuration: bigint;
  /** `host:port` of the discovery service the proxy connects to. */
  readonly discoveryAddress: string;
  /** `host:port` of a statsd collector; unset means none. */
  readonly statsdUdpAddress?: string;
  /** Port of the proxy's admin interface (default 15000). */
  readonly proxyAdminPort: number;
  /** Whether the proxy authenticates the control plane with mutual TLS (default `MUTUAL_TLS`). */
  readonly controlPlaneAuthPolicy: AuthenticationPolicy;
  /** Path of a custom proxy config file used instead of the generated bootstrap. */
  readonly customConfigFile?: string;
  /** Longest stat name the proxy keeps, in characters (default 189). */
  readonly statNameLength: number;
  /** Worker threads of the proxy (default 2); 0 means one per CPU core. */
  readonly concurrency: number;
  /** Path of a custom bootstrap template. */
  readonly proxyBootstrapTemplatePath?: string;
  /** How inbound traffic is captured into the proxy (default `REDIRECT`). */
  readonly interceptionMode: InterceptionMode;
  /** The tracer the proxy reports spans to (default Zipkin at `zipkin.mesh-system:9411`). */
  readonly tracing?: Tracing;
  /** gRPC service the proxy streams access logs to. */
  readonly envoyAccessLogService?: RemoteService;
  /** gRPC service the proxy streams metrics to. */
  readonly envoyMetricsService?: RemoteService;
  /** Environment variables of the agent (`MESH_META_*` and others). */
  readonly proxyMetadata: Readonly<Record<string, string>>;
  /** Port of the agent's status server: readiness and merged metrics (default 15020). */
  readonly statusPort: number;
  /** Extra tags added to the proxy's standard metrics. */
  readonly extraStatTags: readonly string[];
  /** Network topology of a gateway. */
  readonly gatewayTopology?: Topology;
  /** How long the proxy drains when the workload terminates, in nanoseconds (default 5 s). */
  readonly terminationDrainDuration: bigint;
  /** Id of the mesh the proxy belongs to, reported in its metadata. */
  readonly meshId?: string;
  /** Extra proxy statistics to keep. */
  readonly proxyStatsMatcher?: ProxyStatsMatcher;
  /** Whether the application container waits until the proxy is ready (default false). */
  readonly holdApplicationUntilProxyStarts: boolean;
  /** PEM data of extra root certificates for workload-to-workload traffic. */
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
