/**
 * The proxy config as the injection template sees it (`.ProxyConfig`, with the Go getters the template calls)
 * and as `protoToJSON` writes it into `PROXY_CONFIG`: only the fields that differ from the reference's defaults,
 * in the proto's field order, as protobuf JSON omits zero values (wrapped values are written when set).
 * @module
 */
import { parse } from "yaml";
import { goView } from "./go_view.ts";
import { isObject as isObj } from "@mesh/shared/config/validation/fields";

type Obj = Record<string, unknown>;

/** The reference's `DefaultProxyConfig()` values that `protoToJSON` leaves out when unchanged. */
const DEFAULTS: Readonly<Obj> = Object.freeze({
  configPath: "./etc/mesh/proxy",
  binaryPath: "/usr/local/bin/envoy",
  serviceCluster: "mesh-proxy",
  drainDuration: "45s",
  parentShutdownDuration: "60s",
  terminationDrainDuration: "5s",
  discoveryAddress: "meshd.mesh-system.svc:15012",
  controlPlaneAuthPolicy: "MUTUAL_TLS",
  proxyAdminPort: 15000,
  statNameLength: 189,
  statusPort: 15020,
  concurrency: 2,
  tracing: { zipkin: { address: "zipkin.mesh-system:9411" } },
});

/** ProxyConfig's fields in proto declaration order (the order protobuf JSON writes them). */
const FIELD_ORDER = [
  "configPath",
  "binaryPath",
  "serviceCluster",
  "drainDuration",
  "parentShutdownDuration",
  "discoveryAddress",
  "discoveryRefreshDelay",
  "zipkinAddress",
  "statsdUdpAddress",
  "envoyMetricsServiceAddress",
  "proxyAdminPort",
  "availabilityZone",
  "controlPlaneAuthPolicy",
  "customConfigFile",
  "statNameLength",
  "concurrency",
  "proxyBootstrapTemplatePath",
  "interceptionMode",
  "tracing",
  "sds",
  "envoyAccessLogService",
  "envoyMetricsService",
  "proxyMetadata",
  "statusPort",
  "extraStatTags",
  "terminationDrainDuration",
  "meshId",
  "readinessProbe",
  "proxyStatsMatcher",
  "holdApplicationUntilProxyStarts",
  "caCertificatesPem",
]; // deno-fmt-ignore

/** Fields held in protobuf wrapper types: written whenever set, even to zero. */
const WRAPPED = new Set(["concurrency", "holdApplicationUntilProxyStarts"]);
/** Enum fields whose zero value (left out) is named. */
const ENUM_ZERO: Readonly<Record<string, string>> = {
  interceptionMode: "REDIRECT",
  controlPlaneAuthPolicy: "NONE",
};

const RAW = Symbol("proxy config JSON");

const DURATIONS = new Set([
  "drainDuration",
  "parentShutdownDuration",
  "terminationDrainDuration",
  "discoveryRefreshDelay",
  "connectTimeout",
]);
const UNIT_SECONDS: Readonly<Record<string, number>> = {
  h: 3600,
  m: 60,
  s: 1,
  ms: 1e-3,
  us: 1e-6,
  "µs": 1e-6,
  ns: 1e-9,
};

/** A duration (`1m0s`, `60s`, `1.5s`) as protobuf JSON writes it: seconds with an `s`; other values as they are. */
function protoDuration(value: unknown): unknown {
  if (typeof value !== "string" || !/^(\d+(\.\d+)?(h|m|s|ms|us|µs|ns))+$/.test(value)) return value;
  let seconds = 0;
  for (const [, amount, unit] of value.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/g)) {
    seconds += Number(amount) * UNIT_SECONDS[unit];
  }
  return `${Number(seconds.toFixed(9))}s`;
}

const isZero = (value: unknown): boolean =>
  value === undefined || value === null || value === "" || value === 0 || value === false ||
  (Array.isArray(value) && value.length === 0) ||
  (typeof value === "object" && value !== null && Object.keys(value).length === 0);

/**
 * The proxy config of a pod: the mesh's `defaultConfig` with the pod's `proxy.mesh.io/config` annotation (YAML)
 * over it, field by field as the reference applies it.
 *
 * @throws {SyntaxError} when the annotation is not a YAML mapping
 */
export function podProxyConfig(defaultConfig: Readonly<Obj>, annotation: string | undefined): Obj {
  if (annotation === undefined) return { ...defaultConfig };
  let overlay: unknown;
  try {
    overlay = parse(annotation);
  } catch (error) {
    throw new SyntaxError(
      `Cannot read "proxy.mesh.io/config" as YAML: ${(error as Error).message.split("\n")[0]}`,
    );
  }
  if (overlay === null || overlay === undefined) return { ...defaultConfig };
  if (typeof overlay !== "object" || Array.isArray(overlay)) {
    throw new SyntaxError(`Cannot read "proxy.mesh.io/config": expected a mapping of ProxyConfig fields`);
  }
  // As the reference's proto merge: fields replace the default's, map entries (`proxyMetadata`) are merged.
  const merged: Obj = { ...defaultConfig, ...overlay as Obj };
  const metadata = (overlay as Obj).proxyMetadata;
  if (isObj(metadata) && isObj(defaultConfig.proxyMetadata)) {
    merged.proxyMetadata = { ...defaultConfig.proxyMetadata, ...metadata };
  }
  return merged;
}

/** `.ProxyConfig` for the template: Go names, the enum's `String`, the wrappers' and tracing's getters. */
export function proxyConfigView(config: Readonly<Obj>): unknown {
  const tracing = (config.tracing ?? {}) as Obj;
  const tls = Object.values(tracing).map((t) => (t as Obj | null)?.tlsSettings).find((t) =>
    t !== undefined
  ) as
    | Obj
    | undefined;
  const mode = String(config.interceptionMode ?? "REDIRECT");
  return goView(config, {
    [RAW]: config,
    InterceptionMode: { String: () => mode },
    Concurrency: { GetValue: () => Number(config.concurrency ?? 0) },
    HoldApplicationUntilProxyStarts: { GetValue: () => config.holdApplicationUntilProxyStarts === true },
    StatusPort: Number(config.statusPort ?? 0),
    ProxyMetadata: { ...(config.proxyMetadata as Obj ?? {}) },
    GetTracing: () => ({
      GetTlsSettings: () => (tls ? { GetCaCertificates: () => String(tls.caCertificates ?? "") } : undefined),
    }),
  });
}

/** Istio's `protoToJSON` of the proxy config: the fields that differ from the defaults, in proto order. */
export function protoToJSON(view: unknown): string {
  const config = (view as { [RAW]?: Obj } | undefined)?.[RAW];
  if (config === undefined) return "{}";
  const out: Obj = {};
  for (const key of FIELD_ORDER) {
    const value = DURATIONS.has(key) ? protoDuration(config[key]) : config[key];
    if (value === undefined || value === null) continue;
    if (key in DEFAULTS && JSON.stringify(value) === JSON.stringify(DEFAULTS[key])) continue;
    if (!WRAPPED.has(key) && (isZero(value) || ENUM_ZERO[key] === value)) continue;
    out[key] = value;
  }
  return JSON.stringify(out);
}
