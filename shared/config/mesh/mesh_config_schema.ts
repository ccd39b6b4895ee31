import { childPath, type ValidationReport } from "../validation/report.ts";
import { checkWildcardDomain } from "../validation/hosts.ts";
import { checkLabelKey, checkLabelValue, isDnsLabel, isLowercaseDnsLabel } from "../validation/labels.ts";
import { exportToAt } from "../validation/exportto.ts";
import { MILLISECOND, SECOND } from "../validation/durations.ts";
import { mapKeyPath } from "../validation/paths.ts";
import { localityLbAt, type LocalityLoadBalancerSetting } from "../networking/locality_lb.ts";
import {
  bool,
  checkedStr,
  type Decoder,
  duration,
  enumOf,
  list,
  mapOf,
  message,
  port,
  str,
} from "./decoders.ts";
import { extensionProviders } from "./extension_providers.ts";
import type {
  Certificate,
  CertificateData,
  ConfigSource,
  DefaultProviders,
  LabelSelector,
  LabelSelectorRequirement,
  MeshConfig,
  OutboundTrafficPolicy,
  ServiceSettings,
  ThriftConfig,
} from "./mesh_config.ts";
import type { ProxyConfig } from "./proxy_config.ts";
import { clientTls, proxyConfigFields, tcpKeepalive } from "./proxy_config_schema.ts";

/** A mesh config file's fields: any subset, with `defaultConfig` itself partial (it is merged, not replaced). */
export type MeshConfigFields = Partial<Omit<MeshConfig, "defaultConfig">> & {
  readonly defaultConfig?: Partial<ProxyConfig>;
};

/** Checks a SPIFFE trust domain as Istio does: DNS labels joined by dots, an optional trailing dot. */
export function checkTrustDomain(domain: string): string | undefined {
  if (domain === "") return "empty trust domain not allowed";
  const parts = domain.split(".");
  for (const [i, label] of parts.entries()) {
    if (i === parts.length - 1 && label === "" && i > 0) return undefined;
    if (!isDnsLabel(label)) {
      return `trust domain "${domain}" invalid (label "${label}" is not a DNS label); expected e.g. "cluster.local"`;
    }
  }
  return undefined;
}

function exportTo(allowNone: boolean): Decoder<string[]> {
  return (report, path, value) => {
    if (value === undefined || value === null) return undefined;
    const before = report.errors.length;
    const out = exportToAt(report, path, value, { namespace: ".", allowNone });
    return report.errors.length === before ? out : undefined;
  };
}

const localityLbSetting: Decoder<LocalityLoadBalancerSetting> = (report, path, value) => {
  if (value === undefined || value === null) return undefined;
  const before = report.errors.length;
  localityLbAt(report, path, value);
  return report.errors.length === before ? value as LocalityLoadBalancerSetting : undefined;
};

const labelSelector = message<LabelSelector>({
  matchLabels: mapOf(str),
  matchExpressions: list(message<LabelSelectorRequirement>({
    key: checkedStr(checkLabelKey),
    operator: enumOf("In", "NotIn", "Exists", "DoesNotExist"),
    values: list(checkedStr(checkLabelValue)),
  }, { check: checkRequirement })),
}, { check: checkMatchLabels });

function checkMatchLabels(report: ValidationReport, path: string, selector: Partial<LabelSelector>): void {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    const problem = checkLabelKey(key) ?? checkLabelValue(value);
    if (problem) report.error(mapKeyPath(childPath(path, "matchLabels"), key), problem);
  }
}

function checkRequirement(
  report: ValidationReport,
  path: string,
  r: Partial<LabelSelectorRequirement>,
): void {
  if (!r.key) report.error(childPath(path, "key"), "key is required");
  if (r.operator === undefined) {
    report.error(childPath(path, "operator"), "operator is required: In, NotIn, Exists or DoesNotExist");
  }
  const values = r.values ?? [];
  if ((r.operator === "In" || r.operator === "NotIn") && values.length === 0) {
    report.error(childPath(path, "values"), `values must be non-empty for operator ${r.operator}`);
  }
  if ((r.operator === "Exists" || r.operator === "DoesNotExist") && values.length > 0) {
    report.error(childPath(path, "values"), `values must be empty for operator ${r.operator}`);
  }
}

const caCertificate = message<CertificateData>({
  pem: str,
  spiffeBundleUrl: checkedStr((url) =>
    URL.canParse(url) && /^https?:/.test(url) ? undefined : `"${url}" is not an http(s) URL`
  ),
  certSigners: list(str),
  trustDomains: list(checkedStr(checkTrustDomain)),
}, {
  oneofs: [["pem", "spiffeBundleUrl"]],
  check: (report, path, c) => {
    if (!c.pem && !c.spiffeBundleUrl) report.error(path, "one of pem or spiffeBundleUrl is required");
  },
});

/** Decodes and checks every field of a mesh config file; absent fields stay absent. */
export const meshConfigFields: Decoder<MeshConfigFields> = message<MeshConfigFields>({
  proxyListenPort: port,
  proxyHttpPort: (report, path, value) => value === 0 ? undefined : port(report, path, value),
  connectTimeout: duration({ min: MILLISECOND, max: 30n * SECOND, precision: MILLISECOND }),
  protocolDetectionTimeout: duration({ min: 0n, precision: MILLISECOND }),
  tcpKeepalive,
  ingressClass: str,
  ingressService: str,
  ingressControllerMode: enumOf("UNSPECIFIED", "OFF", "DEFAULT", "STRICT"),
  ingressSelector: str,
  enableTracing: bool,
  accessLogFile: str,
  accessLogFormat: str,
  accessLogEncoding: enumOf("TEXT", "JSON"),
  enableEnvoyAccessLogService: bool,
  disableEnvoyListenerLog: bool,
  defaultConfig: proxyConfigFields,
  outboundTrafficPolicy: message<OutboundTrafficPolicy>({ mode: enumOf("REGISTRY_ONLY", "ALLOW_ANY") }),
  configSources: list(message<ConfigSource>({
    address: str,
    tlsSettings: clientTls,
    subscribedResources: list(enumOf("SERVICE_REGISTRY")),
  })),
  enableAutoMtls: bool,
  trustDomain: checkedStr(checkTrustDomain),
  trustDomainAliases: list(checkedStr(checkTrustDomain)),
  caCertificates: list(caCertificate),
  defaultServiceExportTo: exportTo(true),
  defaultVirtualServiceExportTo: exportTo(false),
  defaultDestinationRuleExportTo: exportTo(false),
  rootNamespace: checkedStr((ns) =>
    isLowercaseDnsLabel(ns)
      ? undefined
      : `invalid namespace "${ns}"; expected a lower-case DNS label such as "mesh-system"`
  ),
  localityLbSetting,
  dnsRefreshRate: duration({ min: MILLISECOND, precision: MILLISECOND }),
  h2UpgradePolicy: enumOf("DO_NOT_UPGRADE", "UPGRADE"),
  inboundClusterStatName: str,
  outboundClusterStatName: str,
  certificates: list(message<Certificate>({ secretName: str, dnsNames: list(str) })),
  thriftConfig: message<ThriftConfig>({
    rateLimitUrl: str,
    rateLimitTimeout: duration({ min: MILLISECOND, precision: MILLISECOND }),
  }),
  serviceSettings: list(message<ServiceSettings>({
    settings: message<NonNullable<ServiceSettings["settings"]>>({ clusterLocal: bool }),
    hosts: list(checkedStr(checkWildcardDomain)),
  })),
  enablePrometheusMerge: bool,
  verifyCertificateAtClient: bool,
  extensionProviders,
  defaultProviders: message<DefaultProviders>({
    tracing: list(str),
    metrics: list(str),
    accessLogging: list(str),
  }),
  discoverySelectors: list(labelSelector),
});

/** Checks across fields of a complete (merged) mesh config; the proxy config is checked separately. */
export function checkMeshConfig(report: ValidationReport, mesh: MeshConfig): void {
  if (
    mesh.accessLogEncoding === "JSON" && mesh.accessLogFormat !== "" &&
    jsonObjectOf(mesh.accessLogFormat) === undefined
  ) {
    report.error(
      "accessLogFormat",
      "with accessLogEncoding JSON it must be a JSON object of field names to operators",
    );
  }
  const known = new Set(mesh.extensionProviders.map((p) => p.name));
  for (const kind of ["tracing", "metrics", "accessLogging"] as const) {
    for (const [i, name] of (mesh.defaultProviders[kind] ?? []).entries()) {
      if (!known.has(name)) {
        report.warn(
          childPath(childPath("defaultProviders", kind), i),
          `default provider "${name}" is not among extensionProviders`,
        );
      }
    }
  }
}

/** The JSON object `text` holds (an access log format's fields), or undefined when it holds none. */
export function jsonObjectOf(text: string): Record<string, unknown> | undefined {
  try {
    const parsed = JSON.parse(text);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}
