import { childPath, type ValidationReport } from "../validation/report.ts";
import { checkFqdn } from "../validation/hosts.ts";
import { isIp, isIPv6 } from "../validation/ip.ts";
import { checkPort } from "../validation/ports.ts";
import { formatDuration, MILLISECOND, SECOND } from "../validation/durations.ts";
import { clientTlsAt, type ClientTLSSettings } from "../networking/tls_settings.ts";
import {
  bool,
  checkedStr,
  type Decoder,
  double,
  duration,
  enumOf,
  int32,
  list,
  mapOf,
  message,
  port,
  str,
  uint32,
} from "./decoders.ts";
import type {
  CustomTag,
  ProxyConfig,
  ProxyStatsMatcher,
  RemoteService,
  TcpKeepalive,
  Topology,
  Tracing,
} from "./proxy_config.ts";

const HOUR = 3600n * SECOND;

/** Checks a `host:port` address as Istio's `ValidateProxyAddress` does; returns a message when invalid. */
export function checkProxyAddress(address: string): string | undefined {
  let host: string;
  let portText: string;
  if (address.startsWith("[")) {
    const end = address.indexOf("]");
    if (end < 0 || address[end + 1] !== ":") return `"${address}" must be host:port, e.g. "[::1]:15012"`;
    host = address.slice(1, end);
    portText = address.slice(end + 2);
    if (!isIPv6(host)) return `"${host}" in "${address}" is not an IPv6 address`;
  } else {
    const colon = address.lastIndexOf(":");
    if (colon < 0 || address.indexOf(":") !== colon) {
      return `"${address}" must be host:port, e.g. "meshd.mesh-system.svc:15012"`;
    }
    host = address.slice(0, colon);
    portText = address.slice(colon + 1);
  }
  if (!/^[0-9]+$/.test(portText)) return `port "${portText}" of "${address}" is not a number`;
  const portProblem = checkPort(Number(portText));
  if (portProblem) return `${portProblem} in "${address}"`;
  if (checkFqdn(host) !== undefined && !isIp(host)) {
    return `"${host}" in "${address}" is not a valid hostname or an IPv4/IPv6 address`;
  }
  return undefined;
}

/** A `host:port` address field. */
export const proxyAddress: Decoder<string> = checkedStr(checkProxyAddress);

/** Client TLS settings, validated as in destination rules. */
export const clientTls: Decoder<ClientTLSSettings> = (report, path, value) => {
  const before = report.errors.length;
  const tls = clientTlsAt(report, path, value);
  return report.errors.length === before ? tls : undefined;
};

/** TCP keepalive settings. */
export const tcpKeepalive: Decoder<Partial<TcpKeepalive>> = message<TcpKeepalive>({
  probes: uint32,
  time: duration({ min: MILLISECOND, precision: MILLISECOND }),
  interval: duration({ min: MILLISECOND, precision: MILLISECOND }),
});

const remoteService = message<RemoteService>({
  address: proxyAddress,
  tlsSettings: clientTls,
  tcpKeepalive,
});

const nameAndDefault = message<{ name: string; defaultValue: string }>({ name: str, defaultValue: str });

const customTag = message<CustomTag>({
  literal: message<{ value: string }>({ value: str }),
  environment: nameAndDefault,
  header: nameAndDefault,
}, { oneofs: [["literal", "environment", "header"]] });

const TRACERS = ["zipkin", "lightstep", "datadog", "stackdriver", "openCensusAgent"] as const;

const tracing = message<Tracing>({
  zipkin: message<{ address: string }>({ address: str }),
  lightstep: message<{ address: string; accessToken: string }>({ address: str, accessToken: str }),
  datadog: message<{ address: string }>({ address: str }),
  stackdriver: message<NonNullable<Tracing["stackdriver"]>>({
    debug: bool,
    maxNumberOfAttributes: uint32,
    maxNumberOfAnnotations: uint32,
    maxNumberOfMessageEvents: uint32,
  }),
  openCensusAgent: message<NonNullable<Tracing["openCensusAgent"]>>({
    address: str,
    context: list(enumOf("UNSPECIFIED", "W3C_TRACE_CONTEXT", "GRPC_BIN", "CLOUD_TRACE_CONTEXT", "B3")),
  }),
  customTags: mapOf(customTag),
  maxPathTagLength: uint32,
  sampling: (report, path, value) => {
    const n = double(report, path, value);
    if (n !== undefined && (n < 0 || n > 100)) {
      report.error(path, `sampling must be a percentage in 0..100, got ${n}`);
    }
    return n;
  },
  tlsSettings: clientTls,
}, { oneofs: [TRACERS], check: checkTracers });

function checkTracers(report: ValidationReport, path: string, t: Partial<Tracing>): void {
  for (const name of ["zipkin", "datadog", "lightstep"] as const) {
    const tracer = t[name];
    if (tracer === undefined) continue;
    const at = childPath(childPath(path, name), "address");
    const problem = checkProxyAddress(tracer.address ?? "");
    if (problem) report.error(at, `invalid ${name} collector address: ${problem}`);
  }
  if (t.lightstep !== undefined && !t.lightstep.accessToken) {
    report.error(childPath(childPath(path, "lightstep"), "accessToken"), "access token is required");
  }
}

/** The fields of a `ProxyConfig` as written in YAML; absent fields stay absent. */
export const proxyConfigFields: Decoder<Partial<ProxyConfig>> = message<ProxyConfig>({
  configPath: str,
  binaryPath: str,
  serviceCluster: str,
  drainDuration: duration({ min: MILLISECOND, precision: MILLISECOND }),
  parentShutdownDuration: duration({ min: MILLISECOND, precision: MILLISECOND }),
  discoveryAddress: str,
  statsdUdpAddress: proxyAddress,
  proxyAdminPort: port,
  controlPlaneAuthPolicy: enumOf("NONE", "MUTUAL_TLS"),
  customConfigFile: str,
  statNameLength: int32,
  concurrency: (report, path, value) => {
    const n = int32(report, path, value);
    if (n !== undefined && n < 0) {
      report.error(path, `concurrency must be at least 0 (0: one worker per core), got ${n}`);
    }
    return n;
  },
  proxyBootstrapTemplatePath: str,
  interceptionMode: enumOf("REDIRECT", "TPROXY", "NONE"),
  tracing,
  envoyAccessLogService: remoteService,
  envoyMetricsService: remoteService,
  proxyMetadata: mapOf(str),
  statusPort: port,
  extraStatTags: list(str),
  gatewayTopology: message<Topology>({
    numTrustedProxies: uint32,
    forwardClientCertDetails: enumOf(
      "UNDEFINED",
      "SANITIZE",
      "FORWARD_ONLY",
      "APPEND_FORWARD",
      "SANITIZE_SET",
      "ALWAYS_FORWARD_ONLY",
    ),
  }),
  terminationDrainDuration: duration({ min: 0n }),
  meshId: str,
  proxyStatsMatcher: message<ProxyStatsMatcher>({
    inclusionPrefixes: list(str),
    inclusionSuffixes: list(str),
    inclusionRegexps: list(str),
  }),
  holdApplicationUntilProxyStarts: bool,
  caCertificatesPem: list(str),
}) as Decoder<Partial<ProxyConfig>>;

/**
 * Checks a complete (merged) proxy config as Istio's `ValidateProxyConfig` does: required paths and
 * addresses, and the drain and parent shutdown durations (whole seconds, at most 1h, parent longer).
 */
export function checkProxyConfig(report: ValidationReport, path: string, pc: ProxyConfig): void {
  const at = (field: string) => childPath(path, field);
  if (pc.configPath === "") report.error(at("configPath"), "config path must be set");
  if (pc.binaryPath === "") report.error(at("binaryPath"), "binary path must be set");
  if (pc.serviceCluster === "") report.error(at("serviceCluster"), "service cluster must be set");
  if (pc.discoveryAddress === "") {
    report.error(at("discoveryAddress"), "discovery address must be set to the proxy discovery service");
  } else {
    const problem = checkProxyAddress(pc.discoveryAddress);
    if (problem) report.error(at("discoveryAddress"), `invalid discovery address: ${problem}`);
  }
  const drain = pc.drainDuration;
  const parent = pc.parentShutdownDuration;
  if (drain % SECOND !== 0n) {
    report.error(
      at("drainDuration"),
      `drain time only supports durations to seconds precision, got ${formatDuration(drain)}`,
    );
  }
  if (parent % SECOND !== 0n) {
    report.error(
      at("parentShutdownDuration"),
      `parent shutdown time only supports durations to seconds precision, got ${formatDuration(parent)}`,
    );
  }
  if (drain > HOUR) {
    report.error(at("drainDuration"), `drain time ${formatDuration(drain)} must be at most 1h`);
  }
  if (parent > HOUR) {
    report.error(
      at("parentShutdownDuration"),
      `parent shutdown time ${formatDuration(parent)} must be at most 1h`,
    );
  }
  if (parent <= drain) {
    report.error(
      at("parentShutdownDuration"),
      `parent shutdown time ${formatDuration(parent)} must be greater than drain time ${
        formatDuration(drain)
      }`,
    );
  }
}
