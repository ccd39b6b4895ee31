/**
 * Options of `mesh-agent mesh-iptables` / `mesh-clean-iptables`: a frozen, validated {@linkcode IptablesConfig}
 * built from typed options ({@linkcode iptablesConfig}) or from raw flags with environment fallbacks
 * ({@linkcode iptablesConfigFromFlags}).
 * @module
 */

import { parseDuration } from "../../shared/flags/duration.ts";
import { checkId, checkInterface, checkMark, checkPort, checkRouteTable, cidrOf } from "./_checks.ts";
import { type Cidr, parseIp } from "./cidr.ts";
import { DEFAULTS } from "./constants.ts";
import { lookupPasswdUser, type UserIds } from "./passwd.ts";

/** How inbound connections reach the proxy. */
export type InterceptionMode = "REDIRECT" | "TPROXY";

/** Validated capture options. Lists are deduplicated only by the caller; order is rule order. */
export interface IptablesConfig {
  readonly proxyPort: number;
  readonly inboundCapturePort: number;
  readonly inboundTunnelPort: number;
  readonly proxyUids: readonly number[];
  readonly proxyGids: readonly number[];
  readonly interceptionMode: InterceptionMode;
  /** `"*"` captures every inbound port; an empty list captures none. */
  readonly inboundPorts: "*" | readonly number[];
  /** Inbound ports left alone; used only when `inboundPorts` is `"*"`. */
  readonly localExcludePorts: readonly number[];
  readonly outboundPortsInclude: readonly number[];
  readonly outboundPortsExclude: readonly number[];
  /** `"*"` captures all outbound traffic; an empty list disables outbound capture by address. */
  readonly serviceCidrs: "*" | readonly Cidr[];
  readonly serviceExcludeCidrs: readonly Cidr[];
  readonly virtualInterfaces: readonly string[];
  readonly tproxyMark: string;
  readonly tproxyRouteTable: string;
  readonly probePort: number;
  readonly probeTimeoutMs: number;
  readonly dryRun: boolean;
  readonly restoreFormat: boolean;
  readonly runValidation: boolean;
  readonly skipRuleApply: boolean;
  readonly dnsCapture: boolean;
  /** True when any CIDR or pod address is IPv6: IPv6 rules are then built and applied. */
  readonly enableIpv6: boolean;
}

/** Typed input of {@linkcode iptablesConfig}; every field is optional and defaults as in the reference. */
export interface IptablesOptions {
  proxyPort?: number;
  inboundCapturePort?: number;
  inboundTunnelPort?: number;
  proxyUids?: readonly number[];
  proxyGids?: readonly number[];
  interceptionMode?: InterceptionMode;
  inboundPorts?: "*" | readonly number[];
  localExcludePorts?: readonly number[];
  outboundPortsInclude?: readonly number[];
  outboundPortsExclude?: readonly number[];
  serviceCidrs?: "*" | readonly string[];
  serviceExcludeCidrs?: readonly string[];
  virtualInterfaces?: readonly string[];
  tproxyMark?: string;
  tproxyRouteTable?: string;
  probePort?: number;
  probeTimeoutMs?: number;
  dryRun?: boolean;
  restoreFormat?: boolean;
  runValidation?: boolean;
  skipRuleApply?: boolean;
  dnsCapture?: boolean;
  /** The pod's own addresses; an IPv6 one enables IPv6 rules. */
  podIps?: readonly string[];
}

/** Validates options and returns a frozen config. Throws RangeError/TypeError naming the field and value. */
export function iptablesConfig(options: IptablesOptions = {}): IptablesConfig {
  const port = (value: number | undefined, fallback: number, field: string) =>
    checkPort(value ?? fallback, field);
  const ports = (list: readonly number[] | undefined, field: string) =>
    Object.freeze((list ?? []).map((value) => checkPort(value, field)));
  const ids = (list: readonly number[] | undefined, field: string) => {
    const result = (list ?? [DEFAULTS.proxyId]).map((value) => checkId(value, field));
    if (result.length === 0) throw new RangeError(`Invalid ${field} "": expected at least one numeric id`);
    return Object.freeze(result);
  };
  const mode = options.interceptionMode ?? "REDIRECT";
  if (mode !== "REDIRECT" && mode !== "TPROXY") {
    throw new TypeError(`Invalid interceptionMode "${mode}": expected "REDIRECT" or "TPROXY"`);
  }
  const serviceCidrs = options.serviceCidrs === "*"
    ? "*" as const
    : Object.freeze((options.serviceCidrs ?? []).map((text) => cidrOf(text, "serviceCidrs")));
  const serviceExcludeCidrs = Object.freeze(
    (options.serviceExcludeCidrs ?? []).map((text) => cidrOf(text, "serviceExcludeCidrs")),
  );
  const podIps = (options.podIps ?? []).map((text) => {
    const ip = parseIp(text);
    if (!ip) throw new RangeError(`Invalid podIps entry "${text}": expected an IPv4 or IPv6 address`);
    return ip;
  });
  const probeTimeoutMs = options.probeTimeoutMs ?? 5000;
  if (!Number.isFinite(probeTimeoutMs) || probeTimeoutMs <= 0) {
    throw new RangeError(
      `Invalid probeTimeoutMs "${probeTimeoutMs}": expected a positive number of milliseconds`,
    );
  }
  const allCidrs = [...(serviceCidrs === "*" ? [] : serviceCidrs), ...serviceExcludeCidrs];
  return Object.freeze({
    proxyPort: port(options.proxyPort, DEFAULTS.proxyPort, "proxyPort"),
    inboundCapturePort: port(options.inboundCapturePort, DEFAULTS.inboundCapturePort, "inboundCapturePort"),
    inboundTunnelPort: port(options.inboundTunnelPort, DEFAULTS.inboundTunnelPort, "inboundTunnelPort"),
    proxyUids: ids(options.proxyUids, "proxyUids"),
    proxyGids: ids(options.proxyGids ?? options.proxyUids, "proxyGids"),
    interceptionMode: mode,
    inboundPorts: options.inboundPorts === "*" ? "*" : ports(options.inboundPorts, "inboundPorts"),
    localExcludePorts: ports(options.localExcludePorts, "localExcludePorts"),
    outboundPortsInclude: ports(options.outboundPortsInclude, "outboundPortsInclude"),
    outboundPortsExclude: ports(options.outboundPortsExclude, "outboundPortsExclude"),
    serviceCidrs,
    serviceExcludeCidrs,
    virtualInterfaces: Object.freeze((options.virtualInterfaces ?? []).map((name) => checkInterface(name))),
    tproxyMark: checkMark(options.tproxyMark ?? DEFAULTS.tproxyMark, "tproxyMark"),
    tproxyRouteTable: checkRouteTable(
      options.tproxyRouteTable ?? DEFAULTS.tproxyRouteTable,
      "tproxyRouteTable",
    ),
    probePort: port(options.probePort, DEFAULTS.probePort, "probePort"),
    probeTimeoutMs,
    dryRun: options.dryRun ?? false,
    restoreFormat: options.restoreFormat ?? false,
    runValidation: options.runValidation ?? false,
    skipRuleApply: options.skipRuleApply ?? false,
    dnsCapture: options.dnsCapture ?? false,
    enableIpv6: allCidrs.some((cidr) => cidr.family === 6) || podIps.some((ip) => ip.family === 6),
  });
}

/** Long flag names of `mesh-iptables` (spec 4.4), with raw string or boolean values as the CLI parsed them. */
export type IptablesFlags = Partial<Record<IptablesFlagName, string | boolean>>;

/** A long flag name of `mesh-iptables`. */
export type IptablesFlagName =
  | "dry-run"
  | "envoy-port"
  | "inbound-capture-port"
  | "inbound-tunnel-port"
  | "iptables-probe-port"
  | "mesh-inbound-interception-mode"
  | "mesh-inbound-ports"
  | "mesh-inbound-tproxy-mark"
  | "mesh-inbound-tproxy-route-table"
  | "mesh-local-exclude-ports"
  | "mesh-local-outbound-ports-exclude"
  | "mesh-outbound-ports"
  | "mesh-service-cidr"
  | "mesh-service-exclude-cidr"
  | "orch-virt-interfaces"
  | "probe-timeout"
  | "proxy-gid"
  | "proxy-uid"
  | "restore-format"
  | "run-validation"
  | "skip-rule-apply";

/**
 * Environment fallbacks, read once by the caller. A string flag left empty falls back to the variable named
 * after it (upper case, `-` → `_`), except `--envoy-port`, whose variable is `PROXY_PORT`.
 */
export interface IptablesEnv {
  PROXY_PORT?: string;
  INBOUND_CAPTURE_PORT?: string;
  INBOUND_TUNNEL_PORT?: string;
  IPTABLES_PROBE_PORT?: string;
  PROXY_USER?: string;
  PROXY_UID?: string;
  PROXY_GID?: string;
  MESH_INBOUND_INTERCEPTION_MODE?: string;
  MESH_INBOUND_PORTS?: string;
  MESH_INBOUND_TPROXY_MARK?: string;
  MESH_INBOUND_TPROXY_ROUTE_TABLE?: string;
  MESH_LOCAL_EXCLUDE_PORTS?: string;
  MESH_LOCAL_OUTBOUND_PORTS_EXCLUDE?: string;
  MESH_OUTBOUND_PORTS?: string;
  MESH_SERVICE_CIDR?: string;
  MESH_SERVICE_EXCLUDE_CIDR?: string;
  ORCH_VIRT_INTERFACES?: string;
  PROBE_TIMEOUT?: string;
  MESH_META_DNS_CAPTURE?: boolean;
}

/** Host facts the flags do not carry; injectable for tests. */
export interface IptablesHost {
  /** Finds a user's ids; defaults to reading `/etc/passwd`. */
  lookupUser?: (name: string) => UserIds | undefined;
  /** The pod's own addresses; an IPv6 one enables IPv6 rules. */
  podIps?: readonly string[];
}

const ENV_OF: Readonly<Record<string, keyof IptablesEnv>> = {
  "envoy-port": "PROXY_PORT",
  "inbound-capture-port": "INBOUND_CAPTURE_PORT",
  "inbound-tunnel-port": "INBOUND_TUNNEL_PORT",
  "iptables-probe-port": "IPTABLES_PROBE_PORT",
  "proxy-uid": "PROXY_UID",
  "proxy-gid": "PROXY_GID",
  "mesh-inbound-interception-mode": "MESH_INBOUND_INTERCEPTION_MODE",
  "mesh-inbound-ports": "MESH_INBOUND_PORTS",
  "mesh-inbound-tproxy-mark": "MESH_INBOUND_TPROXY_MARK",
  "mesh-inbound-tproxy-route-table": "MESH_INBOUND_TPROXY_ROUTE_TABLE",
  "mesh-local-exclude-ports": "MESH_LOCAL_EXCLUDE_PORTS",
  "mesh-local-outbound-ports-exclude": "MESH_LOCAL_OUTBOUND_PORTS_EXCLUDE",
  "mesh-outbound-ports": "MESH_OUTBOUND_PORTS",
  "mesh-service-cidr": "MESH_SERVICE_CIDR",
  "mesh-service-exclude-cidr": "MESH_SERVICE_EXCLUDE_CIDR",
  "orch-virt-interfaces": "ORCH_VIRT_INTERFACES",
  "probe-timeout": "PROBE_TIMEOUT",
};

/**
 * Builds the config from raw flags (flags win over `env`). The default proxy uid is that of `PROXY_USER`
 * (default `mesh-proxy`) in `/etc/passwd`, else 1337; the default gid is that user's gid, or the uid list when
 * uids were given. Throws RangeError/TypeError naming the flag, the value and what is expected.
 */
export function iptablesConfigFromFlags(
  flags: IptablesFlags,
  env: IptablesEnv = {},
  host: IptablesHost = {},
): IptablesConfig {
  const text = (name: IptablesFlagName): string => {
    const raw = flags[name];
    if (typeof raw === "boolean") throw new TypeError(`Invalid --${name} "${raw}": expected a string value`);
    if (raw !== undefined && raw !== "") return raw.trim();
    const envName = ENV_OF[name];
    const fromEnv = envName === undefined ? undefined : env[envName];
    return typeof fromEnv === "string" ? fromEnv.trim() : "";
  };
  const port = (name: IptablesFlagName) => {
    const value = text(name);
    return value === "" ? undefined : parsePortText(value, `--${name}`);
  };
  const portList = (name: IptablesFlagName) =>
    splitList(text(name)).map((item) => parsePortText(item, `--${name}`));
  const idList = (name: IptablesFlagName) => {
    const items = splitList(text(name));
    return items.length === 0 ? undefined : items.map((item) => parseIdText(item, `--${name}`));
  };
  const bool = (name: IptablesFlagName) => {
    const raw = flags[name];
    if (raw === undefined || typeof raw === "boolean") return raw ?? false;
    if (/^(1|t|true)$/i.test(raw)) return true;
    if (/^(0|f|false)$/i.test(raw) || raw === "") return false;
    throw new TypeError(`Invalid --${name} "${raw}": expected true or false`);
  };
  const cidrs = (name: IptablesFlagName, wildcard: boolean) => {
    const value = text(name);
    if (value === "*") {
      if (wildcard) return "*" as const;
      throw new RangeError(`Invalid --${name} "*": expected a comma-separated list of CIDR ranges`);
    }
    const list = splitList(value);
    list.forEach((item) => cidrOf(item, `--${name}`));
    return list;
  };

  const mode = text("mesh-inbound-interception-mode");
  if (mode !== "" && mode !== "REDIRECT" && mode !== "TPROXY") {
    throw new TypeError(
      `Invalid --mesh-inbound-interception-mode "${mode}": expected "REDIRECT" or "TPROXY"`,
    );
  }
  const inboundPorts = text("mesh-inbound-ports") === "*" ? "*" as const : portList("mesh-inbound-ports");
  let proxyUids = idList("proxy-uid");
  let proxyGids = idList("proxy-gid");
  if (proxyUids === undefined) {
    const user = (host.lookupUser ?? lookupPasswdUser)(env.PROXY_USER || DEFAULTS.proxyUser);
    proxyUids = [user?.uid ?? DEFAULTS.proxyId];
    proxyGids ??= [user?.gid ?? DEFAULTS.proxyId];
  }
  const timeoutText = text("probe-timeout") || DEFAULTS.probeTimeout;
  return iptablesConfig({
    proxyPort: port("envoy-port"),
    inboundCapturePort: port("inbound-capture-port"),
    inboundTunnelPort: port("inbound-tunnel-port"),
    proxyUids,
    proxyGids: proxyGids ?? proxyUids,
    interceptionMode: mode === "" ? undefined : mode,
    inboundPorts,
    localExcludePorts: portList("mesh-local-exclude-ports"),
    outboundPortsInclude: portList("mesh-outbound-ports"),
    outboundPortsExclude: portList("mesh-local-outbound-ports-exclude"),
    serviceCidrs: cidrs("mesh-service-cidr", true),
    serviceExcludeCidrs: cidrs("mesh-service-exclude-cidr", false) as string[],
    virtualInterfaces: splitList(text("orch-virt-interfaces")).map((name) =>
      checkInterface(name, "--orch-virt-interfaces")
    ),
    tproxyMark: checkMark(
      text("mesh-inbound-tproxy-mark") || DEFAULTS.tproxyMark,
      "--mesh-inbound-tproxy-mark",
    ),
    tproxyRouteTable: checkRouteTable(
      text("mesh-inbound-tproxy-route-table") || DEFAULTS.tproxyRouteTable,
      "--mesh-inbound-tproxy-route-table",
    ),
    probePort: port("iptables-probe-port"),
    probeTimeoutMs: parseTimeout(timeoutText),
    dryRun: bool("dry-run"),
    restoreFormat: bool("restore-format"),
    runValidation: bool("run-validation"),
    skipRuleApply: bool("skip-rule-apply"),
    dnsCapture: env.MESH_META_DNS_CAPTURE ?? false,
    podIps: host.podIps,
  });
}

function splitList(text: string): string[] {
  return text.split(",").map((item) => item.trim()).filter((item) => item !== "");
}

function parsePortText(text: string, where: string): number {
  if (!/^\d{1,5}$/.test(text)) {
    throw new RangeError(`Invalid ${where} "${text}": expected a port from 1 to 65535`);
  }
  return checkPort(Number(text), where);
}

function parseIdText(text: string, where: string): number {
  if (!/^\d{1,10}$/.test(text)) throw new RangeError(`Invalid ${where} "${text}": expected a numeric id`);
  return checkId(Number(text), where);
}

function parseTimeout(text: string): number {
  let ns: bigint;
  try {
    ns = parseDuration(text);
  } catch (cause) {
    throw new RangeError(`Invalid --probe-timeout "${text}": expected a positive duration such as "5s"`, {
      cause,
    });
  }
  if (ns <= 0n) {
    throw new RangeError(`Invalid --probe-timeout "${text}": expected a positive duration such as "5s"`);
  }
  return Number(ns / 1_000_000n) || 1;
}
