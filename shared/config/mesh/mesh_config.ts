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
  readonly mode?: "REGISTRY_ONLY" | "ALLOW_ANY";
}

/** Whether HTTP/1.1 connections are upgraded to HTTP/2 by default. */
export type H2UpgradePolicy = "DO_NOT_UPGRADE" | "UPGRADE";

/** Another source of mesh configuration (an MCP server). */
export interface ConfigSource {
  readonly address?: string;
  readonly tlsSettings?: ClientTLSSettings;
  readonly subscribedResources?: readonly "SERVICE_REGISTRY"[];
}

/** An extra root certificate for workload-to-workload traffic: PEM data or a SPIFFE bundle endpoint. */
export interface CertificateData {
  readonly pem?: string;
  readonly spiffeBundleUrl?: string;
  readonly certSigners?: readonly string[];
  readonly trustDomains?: readonly string[];
}

/** A DNS certificate the control plane provisions (deprecated in Istio). */
export interface Certificate {
  readonly secretName?: string;
  readonly dnsNames?: readonly string[];
}

/** Settings of the Thrift rate limit filter. */
export interface ThriftConfig {
  readonly rateLimitUrl?: string;
  /** Nanoseconds. */
  readonly rateLimitTimeout?: bigint;
}

/** Settings applied to the services matching `hosts`. */
export interface ServiceSettings {
  readonly settings?: { readonly clusterLocal?: boolean };
  readonly hosts?: readonly string[];
}

/** One requirement of a label selector. */
export interface LabelSelectorRequirement {
  readonly key?: string;
  readonly operator?: "In" | "NotIn" | "Exists" | "DoesNotExist";
  readonly values?: readonly string[];
}

/** An orchestrator label selector (namespaces the control plane watches). */
export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly LabelSelectorRequirement[];
}

/** Names of the extension providers used when a telemetry policy names none. */
export interface DefaultProviders {
  readonly tracing?: readonly string[];
  readonly metrics?: readonly string[];
  readonly accessLogging?: readonly string[];
}

/**
 * Mesh-wide settings (Istio 1.9's `MeshConfig`, renamed): read from `--meshConfig`, merged over
 * {@link defaultMeshConfig}. Durations are nanoseconds.
 */
export interface MeshConfig {
  readonly proxyListenPort: number;
  readonly proxyHttpPort?: number;
  readonly connectTimeout: bigint;
  readonly protocolDetectionTimeout: bigint;
  readonly tcpKeepalive?: TcpKeepalive;
  readonly ingressClass: string;
  readonly ingressService: string;
  readonly ingressControllerMode: IngressControllerMode;
  readonly ingressSelector?: string;
  readonly enableTracing: boolean;
  readonly accessLogFile: string;
  readonly accessLogFormat: string;
  readonly accessLogEncoding: AccessLogEncoding;
  readonly enableEnvoyAccessLogService: boolean;
  readonly defaultConfig: ProxyConfig;
  readonly outboundTrafficPolicy: OutboundTrafficPolicy;
  readonly configSources: readonly ConfigSource[];
  readonly enableAutoMtls: boolean;
  readonly trustDomain: string;
  readonly trustDomainAliases: readonly string[];
  readonly caCertificates: readonly CertificateData[];
  readonly defaultServiceExportTo: readonly string[];
  readonly defaultVirtualServiceExportTo: readonly string[];
  readonly defaultDestinationRuleExportTo: readonly string[];
  readonly rootNamespace: string;
  readonly localityLbSetting?: LocalityLoadBalancerSetting;
  readonly dnsRefreshRate: bigint;
  readonly h2UpgradePolicy: H2UpgradePolicy;
  readonly inboundClusterStatName: string;
  readonly outboundClusterStatName: string;
  readonly certificates: readonly Certificate[];
  readonly thriftConfig: ThriftConfig;
  readonly serviceSettings: readonly ServiceSettings[];
  readonly enablePrometheusMerge: boolean;
  readonly verifyCertificateAtClient?: boolean;
  readonly extensionProviders: readonly ExtensionProvider[];
  readonly defaultProviders: DefaultProviders;
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
