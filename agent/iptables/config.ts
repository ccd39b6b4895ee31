/**
 * Options of `mesh-agent mesh-iptables` / `mesh-clean-iptables`: a frozen, validated {@linkcode IptablesConfig}
 * built from typed options ({@linkcode iptablesConfig}) or from raw flags with environment fallbacks
 * ({@linkcode iptablesConfigFromFlags}).
 * @module
 */

import { parseDuration } from "@mesh/shared/flags/duration";
import { checkId, checkInterface, checkMark, checkPort, checkRouteTable, cidrOf } from "./_checks.ts";
import { type Cidr, parseIp } from "./cidr.ts";
import { DEFAULTS } from "./constants.ts";
import { lookupPasswdUser, type UserIds } from "./passwd.ts";

/** How inbound connections reach the proxy. */
export type InterceptionMode = "REDIRECT" | "TPROXY";

/** Validated capture options. Lists are deduplicated only by the caller; order is rule order. */
export interface IptablesConfig {
  /** Port the proxy's outbound listener takes redirected outbound TCP on (`--envoy-port`, default 15001). */
  readonly proxyPort: number;
  /** Port all captured inbound TCP is redirected or TPROXYed to (default 15006). */
  readonly inboundCapturePort: number;
  /** The proxy's inbound tunnel port (default 15008); traffic to it is never redirected. */
  readonly inboundTunnelPort: number;
  /** Uids whose traffic is never captured (the proxy's own), so the proxy cannot loop; never empty. */
  readonly proxyUids: readonly number[];
  /** Gids whose traffic is never captured, like `proxyUids`; never empty. */
  readonly proxyGids: readonly number[];
  /** How inbound traffic reaches the proxy; TPROXY applies to IPv4 only, IPv6 is always REDIRECTed. */
  readonly interceptionMode: InterceptionMode;
  /** `"*"` captures every inbound port; an empty list captures none. */
  readonly inboundPorts: "*" | readonly number[];
  /** Inbound ports left alone; used only when `inboundPorts` is `"*"`. */
  readonly localExcludePorts: readonly number[];
  /** Outbound ports always redirected to the proxy, whatever the destination address. */
  readonly outboundPortsInclude: readonly number[];
  /** Outbound ports never redirected; checked before the loopback rules, so app-to-self traffic too. */
  readonly outboundPortsExclude: readonly number[];
  /** `"*"` captures all outbound traffic; an empty list disables outbound capture by address. */
  readonly serviceCidrs: "*" | readonly Cidr[];
  /** Destination ranges never redirected; applies only when `serviceCidrs` is `"*"`. */
  readonly serviceExcludeCidrs: readonly Cidr[];
  /** Interfaces whose inbound traffic (from a VM) is treated as outbound. */
  readonly virtualInterfaces: readonly string[];
  /** Firewall mark set on inbound packets in TPROXY mode, as the decimal or hex text iptables takes. */
  readonly tproxyMark: string;
  /** Routing table that TPROXY-marked packets are routed by, to reach the proxy over lo. */
  readonly tproxyRouteTable: string;
  /** Port the validation probe's listener binds to (default 15002). */
  readonly probePort: number;
  /** How long the validation probe waits for captured traffic, in milliseconds; positive. */
  readonly probeTimeoutMs: number;
  /** Print the rules instead of applying them; no external command is run. */
  readonly dryRun: boolean;
  /** Print in `iptables-restore` input format rather than as iptables commands. */
  readonly restoreFormat: boolean;
  /** After applying, prove with a probe connection that capture works. */
  readonly runValidation: boolean;
  /** Build the rules and log them, but do not apply them. */
  readonly skipRuleApply: boolean;
  /** Redirect the app's DNS (port 53, IPv4) to the agent's DNS proxy on port 15053. */
  readonly dnsCapture: boolean;
  /** True when any CIDR or pod address is IPv6: IPv6 rules are then built and applied. */
  readonly enableIpv6: boolean;
}

/** Typed input of {@linkcode iptablesConfig}; every field is optional and defaults as in the reference. */
export interface IptablesOptions {
  /** See {@linkcode IptablesConfig.proxyPort}; default 15001. */
  proxyPort?: number;
  /** See {@linkcode IptablesConfig.inboundCapturePort}; default 15006. */
  inboundCapturePort?: number;
  /** See {@linkcode IptablesConfig.inboundTunnelPort}; default 15008. */
  inboundTunnelPort?: number;
  /** See {@linkcode IptablesConfig.proxyUids}; default `[1337]`. */
  proxyUids?: readonly number[];
  /** See {@linkcode IptablesConfig.proxyGids}; defaults to `proxyUids`, then `[1337]`. */
  proxyGids?: readonly number[];
  /** See {@linkcode IptablesConfig.interceptionMode}; default `"REDIRECT"`. */
  interceptionMode?: InterceptionMode;
  /** See {@linkcode IptablesConfig.inboundPorts}; default none. */
  inboundPorts?: "*" | readonly number[];
  /** See {@linkcode IptablesConfig.localExcludePorts}; default none. */
  localExcludePorts?: readonly number[];
  /** See {@linkcode IptablesConfig.outboundPortsInclude}; default none. */
  outboundPortsInclude?: readonly number[];
  /** See {@linkcode IptablesConfig.outboundPortsExclude}; default none. */
  outboundPortsExclude?: readonly number[];
  /** `"*"` or CIDR ranges as text, parsed into {@linkcode IptablesConfig.serviceCidrs}; default none. */
  serviceCidrs?: "*" | readonly string[];
  /** CIDR ranges as text, parsed into {@linkcode IptablesConfig.serviceExcludeCidrs}; default none. */
  serviceExcludeCidrs?: readonly string[];
  /** See {@linkcode IptablesConfig.virtualInterfaces}; default none. */
  virtualInterfaces?: readonly string[];
  /** See {@linkcode IptablesConfig.tproxyMark}; default `"1337"`. */
  tproxyMark?: string;
  /** See {@linkcode IptablesConfig.tproxyRouteTable}; default `"133"`. */
  tproxyRouteTable?: string;
  /** See {@linkcode IptablesConfig.probePort}; default 15002. */
  probePort?: number;
  /** See {@linkcode IptablesConfig.probeTimeoutMs}, in milliseconds; default 5000. */
  probeTimeoutMs?: number;
  /** See {@linkcode IptablesConfig.dryRun}; default false. */
  dryRun?: boolean;
  /** See {@linkcode IptablesConfig.restoreFormat}; default false. */
  restoreFormat?: boolean;
  /** See {@linkcode IptablesConfig.runValidation}; default false. */
  runValidation?: boolean;
  /** See {@linkcode IptablesConfig.skipRuleApply}; default false. */
  skipRuleApply?: boolean;
  /** See {@linkcode IptablesConfig.dnsCapture}; default false. */
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
  /** Fallback for `--envoy-port`. */
  PROXY_PORT?: string;
  /** Fallback for `--inbound-capture-port`. */
  INBOUND_CAPTURE_PORT?: string;
  /** Fallback for `--inbound-tunnel-port`. */
  INBOUND_TUNNEL_PORT?: string;
  /** Fallback for `--iptables-probe-port`. */
  IPTABLES_PROBE_PORT?: string;
  /**
   * User whose uid and gid in `/etc/passwd` are the default proxy ids when `--proxy-uid` is empty (default
   * `mesh-proxy`).
   */
  PROXY_USER?: string;
  /** Fallback for `--proxy-uid`: a comma-separated list of numeric uids. */
  PROXY_UID?: string;
  /** Fallback for `--proxy-gid`: a comma-separated list of numeric gids. */
  PROXY_GID?: string;
  /** Fallback for `--mesh-inbound-interception-mode`. */
  MESH_INBOUND_INTERCEPTION_MODE?: string;
  /** Fallback for `--mesh-inbound-ports`. */
  MESH_INBOUND_PORTS?: string;
  /** Fallback for `--mesh-inbound-tproxy-mark`. */
  MESH_INBOUND_TPROXY_MARK?: string;
  /** Fallback for `--mesh-inbound-tproxy-route-table`. */
  MESH_INBOUND_TPROXY_ROUTE_TABLE?: string;
  /** Fallback for `--mesh-local-exclude-ports`. */
  MESH_LOCAL_EXCLUDE_PORTS?: string;
  /** Fallback for `--mesh-local-outbound-ports-exclude`. */
  MESH_LOCAL_OUTBOUND_PORTS_EXCLUDE?: string;
  /** Fallback for `--mesh-outbound-ports`. */
  MESH_OUTBOUND_PORTS?: string;
  /** Fallback for `--mesh-service-cidr`. */
  MESH_SERVICE_CIDR?: string;
  /** Fallback for `--mesh-service-exclude-cidr`. */
  MESH_SERVICE_EXCLUDE_CIDR?: string;
  /** Fallback for `--orch-virt-interfaces`. */
  ORCH_VIRT_INTERFACES?: string;
  /** Fallback for `--probe-timeout`. */
  PROBE_TIMEOUT?: string;
  /** Capture DNS (no flag exists); already parsed to a boolean by the caller. */
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
