import type { ClientTLSSettings } from "../networking/tls_settings.ts";
import type { LocalityLoadBalancerSetting } from "../networking/locality_lb.ts";
import type { ExtensionProvider } from "./extension_providers.ts";
import { defaultProxyConfig, type ProxyConfig, type TcpKeepalive } from "./proxy_config.ts";

/** Which ingress resources the mesh's ingress controller handles. */
export type IngressControllerMode = "UNSPECIFIED" | "OFF" | "DEFAULT" | "STRICT";

/** Encoding of proxy access logs. */
export type AccessLogEncoding = "TEXT" | "JSON";

/** What a sidecar does with traffic to destinations it does not know. */
export interface OutboundTrafficPolicy {
  /** `REGISTRY_ONLY` blocks hosts not in the service registry; `ALLOW_ANY` passes them through. */
  readonly mode?: "REGISTRY_ONLY" | "ALLOW_ANY";
}

/** Whether HTTP/1.1 connections are upgraded to HTTP/2 by default. */
export type H2UpgradePolicy = "DO_NOT_UPGRADE" | "UPGRADE";

/** Another source of mesh configuration (an MCP server). */
export interface ConfigSource {
  /** Address of the MCP server (IP or DNS name), or `fs:///dir` for a file-based backend. */
  readonly address?: string;
  /** TLS used to connect to the config source. */
  readonly tlsSettings?: ClientTLSSettings;
  /** What else this source provides: `SERVICE_REGISTRY` makes it a service registry too. */
  readonly subscribedResources?: readonly "SERVICE_REGISTRY"[];
}

/** An extra root certificate for workload-to-workload traffic: PEM data or a SPIFFE bundle endpoint. */
export interface CertificateData {
  /** One or more PEM-encoded root certificates. */
  readonly pem?: string;
  /** URL of a SPIFFE bundle endpoint serving roots. */
  readonly spiffeBundleUrl?: string;
  /** Certificate signers these roots are used for; unset means all signers. */
  readonly certSigners?: readonly string[];
  /** Trust domains these roots are used for; unset means the mesh's trust domain and its aliases. */
  readonly trustDomains?: readonly string[];
}

/** A DNS certificate the control plane provisions (deprecated in Istio). */
export interface Certificate {
  /** Name of the secret the certificate is stored in. */
  readonly secretName?: string;
  /** DNS names the certificate covers. */
  readonly dnsNames?: readonly string[];
}

/** Settings of the Thrift rate limit filter. */
export interface ThriftConfig {
  /** URL of the rate limit service. */
  readonly rateLimitUrl?: string;
  /** Nanoseconds. */
  readonly rateLimitTimeout?: bigint;
}

/** Settings applied to the services matching `hosts`. */
export interface ServiceSettings {
  /** `clusterLocal`: the services are reachable only from their own cluster. */
  readonly settings?: { readonly clusterLocal?: boolean };
  /** Host names the settings apply to; `*` wildcards allowed. */
  readonly hosts?: readonly string[];
}

/** One requirement of a label selector. */
export interface LabelSelectorRequirement {
  /** The label key the requirement applies to. */
  readonly key?: string;
  /** How the label's value relates to `values`. */
  readonly operator?: "In" | "NotIn" | "Exists" | "DoesNotExist";
  /** Values for `In` and `NotIn`; empty for `Exists` and `DoesNotExist`. */
  readonly values?: readonly string[];
}

/** An orchestrator label selector (namespaces the control plane watches). */
export interface LabelSelector {
  /** Labels that must all be present with these exact values. */
  readonly matchLabels?: Readonly<Record<string, string>>;
  /** Requirements that must all hold. */
  readonly matchExpressions?: readonly LabelSelectorRequirement[];
}

/** Names of the extension providers used when a telemetry policy names none. */
export interface DefaultProviders {
  /** Providers for tracing. */
  readonly tracing?: readonly string[];
  /** Providers for metrics. */
  readonly metrics?: readonly string[];
  /** Providers for access logging. */
  readonly accessLogging?: readonly string[];
}

/**
 * Mesh-wide settings (Istio 1.9's `MeshConfig`, renamed): read from `--meshConfig`, merged over
 * {@link defaultMeshConfig}. Durations are nanoseconds.
 */
export interface MeshConfig {
  /** Port the proxy's outbound listener binds (default 15001). */
  readonly proxyListenPort: number;
  /** Port of the proxy's HTTP proxy listener; unset means none. */
  readonly proxyHttpPort?: number;
  /** Connect timeout of upstream connections, in nanoseconds (default 10 s). */
  readonly connectTimeout: bigint;
  /** How long protocol sniffing waits for the first bytes, in nanoseconds (default 100 ms); 0 disables it. */
  readonly protocolDetectionTimeout: bigint;
  /** TCP keepalive of upstream connections. */
  readonly tcpKeepalive?: TcpKeepalive;
  /** Ingress class of the ingress resources the mesh's controller handles (default `mesh`). */
  readonly ingressClass: string;
  /** Name of the ingress gateway service (default `mesh-ingressgateway`). */
  readonly ingressService: string;
  /** Which ingress resources are handled, by their ingress class (default `STRICT`). */
  readonly ingressControllerMode: IngressControllerMode;
  /** Gateway `selector` label value of the gateway deployment that implements ingress. */
  readonly ingressSelector?: string;
  /** Whether proxies report trace spans (default true). */
  readonly enableTracing: boolean;
  /** Path proxies write access logs to; empty disables them, `/dev/stdout` logs to stdout. */
  readonly accessLogFile: string;
  /** Format of access log lines; empty uses the proxy's default. */
  readonly accessLogFormat: string;
  /** Encoding of access log lines (default `TEXT`). */
  readonly accessLogEncoding: AccessLogEncoding;
  /** Whether proxies stream access logs to the gRPC service in `defaultConfig.envoyAccessLogService`. */
  readonly enableEnvoyAccessLogService: boolean;
  /** Whether listeners leave out their own access log of connections no filter chain logged (default false). */
  readonly disableEnvoyListenerLog: boolean;
  /** The proxy config every workload starts from; per-workload settings override it. */
  readonly defaultConfig: ProxyConfig;
  /** What sidecars do with traffic to unknown destinations (default `ALLOW_ANY`). */
  readonly outboundTrafficPolicy: OutboundTrafficPolicy;
  /** Other sources of configuration (MCP servers); empty means the local config only. */
  readonly configSources: readonly ConfigSource[];
  /** Whether clients use mutual TLS automatically to servers with sidecars (default true). */
  readonly enableAutoMtls: boolean;
  /** Trust domain of workload identities, as in `spiffe://<trustDomain>/ns/...` (default `cluster.local`). */
  readonly trustDomain: string;
  /** Other trust domains whose identities are treated as this mesh's. */
  readonly trustDomainAliases: readonly string[];
  /** Extra roots for workload-to-workload traffic, beside the mesh CA's. */
  readonly caCertificates: readonly CertificateData[];
  /** `exportTo` of services that set none (default `["*"]`: every namespace). */
  readonly defaultServiceExportTo: readonly string[];
  /** `exportTo` of VirtualServices that set none (default `["*"]`). */
  readonly defaultVirtualServiceExportTo: readonly string[];
  /** `exportTo` of DestinationRules that set none (default `["*"]`). */
  readonly defaultDestinationRuleExportTo: readonly string[];
  /** Namespace whose Sidecar, EnvoyFilter and policy resources apply mesh-wide (default `mesh-system`). */
  readonly rootNamespace: string;
  /** Mesh-wide locality load balancing; DestinationRules may override it. */
  readonly localityLbSetting?: LocalityLoadBalancerSetting;
  /** How often DNS-resolved clusters are re-resolved, in nanoseconds (default 5 s). */
  readonly dnsRefreshRate: bigint;
  /** Whether HTTP/1.1 upstream connections are upgraded to HTTP/2 (default `DO_NOT_UPGRADE`). */
  readonly h2UpgradePolicy: H2UpgradePolicy;
  /** Stat name pattern of inbound clusters; empty uses the cluster name. */
  readonly inboundClusterStatName: string;
  /** Stat name pattern of outbound clusters; empty uses the cluster name. */
  readonly outboundClusterStatName: string;
  /** DNS certificates the control plane provisions. */
  readonly certificates: readonly Certificate[];
  /** Settings of the Thrift rate limit filter. */
  readonly thriftConfig: ThriftConfig;
  /** Settings applied to the services matching their hosts. */
  readonly serviceSettings: readonly ServiceSettings[];
  /** Whether the agent merges application metrics into the proxy's Prometheus endpoint (default true). */
  readonly enablePrometheusMerge: boolean;
  /**
   * Whether client proxies verify server certificates (SIMPLE or MUTUAL TLS) with the OS roots when a
   * DestinationRule gives no CA.
   */
  readonly verifyCertificateAtClient?: boolean;
  /** Extension providers (tracing, access logs, external authorization) that policies may name. */
  readonly extensionProviders: readonly ExtensionProvider[];
  /** Providers used when a telemetry policy names none. */
  readonly defaultProviders: DefaultProviders;
  /** Namespaces the control plane watches, by label; empty watches all. */
  readonly discoverySelectors: readonly LabelSelector[];
}

const SECOND = 1_000_000_000n;
const MILLISECOND = 1_000_000n;

/** The mesh config used when no file is given, and the base a file is merged over (Istio 1.9's defaults). */
export function defaultMeshConfig(): MeshConfig {
  return {
    proxyListenPort: 15001,
    connectTimeout: 10n * SECOND,
    protocolDetectionTimeout: 100n * MILLISECOND,
    ingressClass: "mesh",
    ingressService: "mesh-ingressgateway",
    ingressControllerMode: "STRICT",
    enableTracing: true,
    accessLogFile: "",
    accessLogFormat: "",
    accessLogEncoding: "TEXT",
    enableEnvoyAccessLogService: false,
    disableEnvoyListenerLog: false,
    defaultConfig: defaultProxyConfig(),
    outboundTrafficPolicy: { mode: "ALLOW_ANY" },
    configSources: [],
    enableAutoMtls: true,
    trustDomain: "cluster.local",
    trustDomainAliases: [],
    caCertificates: [],
    defaultServiceExportTo: ["*"],
    defaultVirtualServiceExportTo: ["*"],
    defaultDestinationRuleExportTo: ["*"],
    rootNamespace: "mesh-system",
    localityLbSetting: { enabled: true },
    dnsRefreshRate: 5n * SECOND,
    h2UpgradePolicy: "DO_NOT_UPGRADE",
    inboundClusterStatName: "",
    outboundClusterStatName: "",
    certificates: [],
    thriftConfig: {},
    serviceSettings: [],
    enablePrometheusMerge: true,
    extensionProviders: [],
    defaultProviders: {},
    discoverySelectors: [],
  };
}
