/**
 * ProxyConfig: defaults ← the mesh config's `defaultConfig` ← `PROXY_CONFIG` (YAML or JSON) ← the
 * `proxy.mesh.io/config` pod annotation. Only the fields the agent reads are kept; each is checked.
 *
 * @module
 */
import { cut } from "@mesh/shared/log/excerpt";
import { parse as parseYaml } from "yaml";
import { parseDuration } from "@mesh/shared/flags/duration";

/** The proxy settings the agent reads. */
export interface ProxyConfig {
  /** Where the discovery server (and, unless `CA_ADDR`, the CA) is. */
  readonly discoveryAddress: string;
  /** The proxy binary. */
  readonly binaryPath: string;
  /** Where bootstraps and sockets go (relative to the agent's working directory). */
  readonly configPath: string;
  readonly proxyAdminPort: number;
  readonly statusPort: number;
  readonly drainDurationMs: number;
  readonly parentShutdownDurationMs: number;
  readonly terminationDrainDurationMs: number;
  /** `MUTUAL_TLS` or `NONE` to the discovery server. */
  readonly controlPlaneAuthPolicy: "MUTUAL_TLS" | "NONE";
  /**
   * `tracing` as written (its `sampling` checked): the discovery server reads the sampling, custom tags and path
   * length from the node metadata `PROXY_CONFIG`; absent when no layer sets it.
   */
  readonly tracing?: Readonly<Record<string, unknown>>;
  /** `envoyAccessLogService.address`: where the proxy streams the access logs the mesh config turns on. */
  readonly accessLogServiceAddress?: string;
}

/** The defaults. */
export const DEFAULT_PROXY_CONFIG: ProxyConfig = Object.freeze({
  discoveryAddress: "meshd.mesh-system.svc:15012",
  binaryPath: "/usr/local/bin/envoy",
  configPath: "./etc/mesh/proxy",
  proxyAdminPort: 15000,
  statusPort: 15020,
  drainDurationMs: 45_000,
  parentShutdownDurationMs: 60_000,
  terminationDrainDurationMs: 5_000,
  controlPlaneAuthPolicy: "MUTUAL_TLS",
});

/** The annotation that carries a pod's ProxyConfig overrides. */
export const PROXY_CONFIG_ANNOTATION = "proxy.mesh.io/config";

/** A value as an error message quotes it: JSON, cut to 120 characters (a pod author writes PROXY_CONFIG). */
function shown(value: unknown): string {
  return cut(JSON.stringify(value) ?? String(value), 120);
}

function layer(base: ProxyConfig, raw: unknown, source: string): ProxyConfig {
  if (raw === undefined || raw === null) return base;
  if (typeof raw !== "object" || Array.isArray(raw)) {
    throw new TypeError(`${source}: expected an object of ProxyConfig fields`);
  }
  const r = raw as Record<string, unknown>;
  const port = (field: string, fallback: number) => {
    const v = r[field];
    if (v === undefined) return fallback;
    if (!Number.isInteger(v) || (v as number) < 1 || (v as number) > 65535) {
      throw new RangeError(`${source}: ${field} is ${shown(v)}; expected a port from 1 to 65535`);
    }
    return v as number;
  };
  const duration = (field: string, fallback: number) => {
    const v = r[field];
    if (v === undefined) return fallback;
    let ns: bigint | undefined;
    try {
      ns = typeof v === "string" ? parseDuration(v) : undefined;
    } catch {
      ns = undefined;
    }
    if (ns === undefined || ns < 0n) {
      throw new RangeError(`${source}: ${field} is ${shown(v)}; expected a duration such as "45s"`);
    }
    return Number(ns / 1_000_000n);
  };
  const text = (field: string, fallback: string) => {
    const v = r[field];
    if (v === undefined) return fallback;
    if (typeof v !== "string" || v === "") {
      throw new TypeError(`${source}: ${field} must be a non-empty string`);
    }
    return v;
  };
  const policy = r.controlPlaneAuthPolicy ?? base.controlPlaneAuthPolicy;
  if (policy !== "MUTUAL_TLS" && policy !== "NONE") {
    throw new RangeError(
      `${source}: controlPlaneAuthPolicy is ${shown(policy)}; expected MUTUAL_TLS or NONE`,
    );
  }
  const tracing = tracingLayer(base.tracing, r.tracing, source);
  const als = r.envoyAccessLogService as Record<string, unknown> | undefined;
  if (
    als !== undefined && (typeof als !== "object" || als === null || typeof (als.address ?? "") !== "string")
  ) {
    throw new TypeError(`${source}: envoyAccessLogService must be an object whose address is "host:port"`);
  }
  const accessLogServiceAddress = (als?.address as string | undefined) || base.accessLogServiceAddress;
  return {
    ...(tracing ? { tracing } : {}),
    ...(accessLogServiceAddress ? { accessLogServiceAddress } : {}),
    discoveryAddress: text("discoveryAddress", base.discoveryAddress),
    binaryPath: text("binaryPath", base.binaryPath),
    configPath: text("configPath", base.configPath),
    proxyAdminPort: port("proxyAdminPort", base.proxyAdminPort),
    statusPort: port("statusPort", base.statusPort),
    drainDurationMs: duration("drainDuration", base.drainDurationMs),
    parentShutdownDurationMs: duration("parentShutdownDuration", base.parentShutdownDurationMs),
    terminationDrainDurationMs: duration("terminationDrainDuration", base.terminationDrainDurationMs),
    controlPlaneAuthPolicy: policy,
  };
}

/** A later layer's tracing fields replace the earlier ones field by field. */
function tracingLayer(
  base: ProxyConfig["tracing"],
  raw: unknown,
  source: string,
): ProxyConfig["tracing"] {
  if (raw === undefined || raw === null) return base;
  if (typeof raw !== "object" || Array.isArray(raw)) {
    throw new TypeError(`${source}: tracing must be an object of tracing settings`);
  }
  const sampling = (raw as Record<string, unknown>).sampling;
  if (sampling !== undefined && (typeof sampling !== "number" || !(sampling >= 0 && sampling <= 100))) {
    throw new RangeError(
      `${source}: tracing.sampling is ${shown(sampling)}; expected a percentage from 0 to 100`,
    );
  }
  return Object.freeze({ ...base, ...raw });
}

/** The text sources of the chain, each possibly empty. */
export interface ProxyConfigSources {
  /** The mesh config file's text and name. */
  readonly meshConfig?: { text: string; source: string };
  /** `PROXY_CONFIG`. */
  readonly env: string;
  /** The annotation's value. */
  readonly annotation?: string;
}

function parse(text: string, source: string): unknown {
  try {
    return parseYaml(text);
  } catch (cause) {
    throw new SyntaxError(`${source} is neither YAML nor JSON: ${(cause as Error).message}`, { cause });
  }
}

/** Merges the chain. */
export function resolveProxyConfig(sources: ProxyConfigSources): ProxyConfig {
  let config = DEFAULT_PROXY_CONFIG;
  if (sources.meshConfig) {
    const mesh = parse(sources.meshConfig.text, sources.meshConfig.source) as Record<string, unknown> | null;
    config = layer(config, mesh?.defaultConfig, `${sources.meshConfig.source} defaultConfig`);
  }
  if (sources.env.trim() !== "") config = layer(config, parse(sources.env, "PROXY_CONFIG"), "PROXY_CONFIG");
  if (sources.annotation) {
    config = layer(
      config,
      parse(sources.annotation, PROXY_CONFIG_ANNOTATION),
      `annotation ${PROXY_CONFIG_ANNOTATION}`,
    );
  }
  return Object.freeze(config);
}
