import { childPath, type ValidationReport } from "../validation/report.ts";
import { objectAt, stringAt } from "../validation/fields.ts";
import { checkNamespacedHost } from "../validation/hosts.ts";
import { isIp } from "../validation/ip.ts";
import { checkPort } from "../validation/ports.ts";
import { enumAt, isSet, stringListAt } from "../validation/values.ts";
import { type Port, portAt } from "./port.ts";
import { checkUnixAddress, UNIX_ADDRESS_PREFIX } from "./workload_entry.ts";

/** How traffic reaches a sidecar listener. */
export type CaptureMode = "DEFAULT" | "IPTABLES" | "NONE";

/** A listener for inbound traffic to the workload. */
export interface IstioIngressListener {
  /** The port the listener binds; required. */
  readonly port: Port;
  /** The IP address the listener binds; absent means every address of the workload. */
  readonly bind?: string;
  /** How traffic reaches the listener (default `DEFAULT`: as the proxy's capture mode says). */
  readonly captureMode?: CaptureMode;
  /** Where the traffic goes: `127.0.0.1:PORT`, `:PORT` or `unix:///path`. */
  readonly defaultEndpoint: string;
}

/** A listener for outbound traffic, limited to the listed hosts; without port it catches all other traffic. */
export interface IstioEgressListener {
  /** The port the listener binds; absent makes a catch-all listener for ports no other listener has. */
  readonly port?: Port;
  /** The IP address or `unix://` socket the listener binds. */
  readonly bind?: string;
  /** How traffic reaches the listener (default `DEFAULT`: as the proxy's capture mode says). */
  readonly captureMode?: CaptureMode;
  /** `namespace/dnsName` entries (`*` and `.` and `~` namespaces allowed). */
  readonly hosts: readonly string[];
}

const CAPTURE_MODES: readonly CaptureMode[] = ["DEFAULT", "IPTABLES", "NONE"];

/** Checks a default endpoint: `unix:///path`, `127.0.0.1:PORT` or `:PORT`. Returns a message when invalid. */
export function checkDefaultEndpoint(endpoint: string): string | undefined {
  if (endpoint.startsWith(UNIX_ADDRESS_PREFIX)) {
    return checkUnixAddress(endpoint.slice(UNIX_ADDRESS_PREFIX.length));
  }
  const colon = endpoint.lastIndexOf(":");
  const host = colon < 0 ? undefined : endpoint.slice(0, colon);
  if (host === undefined || (host !== "" && host !== "127.0.0.1")) {
    return `defaultEndpoint "${endpoint}" must be of form 127.0.0.1:<port>, :<port> or unix://<path>`;
  }
  const port = endpoint.slice(colon + 1);
  if (!/^[0-9]+$/.test(port)) return `defaultEndpoint port "${port}" is not a number`;
  return checkPort(Number(port));
}

function bindAt(report: ValidationReport, path: string, value: unknown): string {
  const bind = stringAt(report, path, value) ?? "";
  if (bind !== "" && !bind.startsWith(UNIX_ADDRESS_PREFIX) && !isIp(bind)) {
    report.error(path, `bind "${bind}" is not a valid IP address`);
  }
  return bind;
}

/** Validates an ingress listener; returns its port number (for uniqueness checks) when known. */
export function ingressListenerAt(
  report: ValidationReport,
  path: string,
  value: unknown,
): number | undefined {
  const obj = objectAt(report, path, value, ["port", "bind", "captureMode", "defaultEndpoint"]);
  if (obj === undefined) return undefined;
  const bind = bindAt(report, childPath(path, "bind"), obj.bind);
  if (bind.startsWith(UNIX_ADDRESS_PREFIX)) {
    report.error(childPath(path, "bind"), "ingress listeners bind to IP addresses only");
  }
  enumAt(report, childPath(path, "captureMode"), obj.captureMode, CAPTURE_MODES);
  const endpointPath = childPath(path, "defaultEndpoint");
  const endpoint = stringAt(report, endpointPath, obj.defaultEndpoint);
  if (!endpoint) report.error(endpointPath, "default endpoint must be set for all ingress listeners");
  else {
    const problem = checkDefaultEndpoint(endpoint);
    if (problem) report.error(endpointPath, problem);
  }
  if (!isSet(obj.port)) {
    report.error(childPath(path, "port"), "port is required for ingress listeners");
    return undefined;
  }
  const rules = { nameRequired: false, protocolRequired: false, allowZero: false, allowTargetPort: false };
  return portAt(report, childPath(path, "port"), obj.port, rules)?.number;
}

/** What identifies an egress listener for uniqueness: its port number, or its Unix socket for port 0. */
export type EgressKey = { readonly port: number } | { readonly unix: string } | { readonly catchAll: true };

/** Validates an egress listener and returns what identifies it, or undefined when it is malformed. */
export function egressListenerAt(
  report: ValidationReport,
  path: string,
  value: unknown,
): EgressKey | undefined {
  const obj = objectAt(report, path, value, ["port", "bind", "captureMode", "hosts"]);
  if (obj === undefined) return undefined;
  const hostsPath = childPath(path, "hosts");
  const hosts = stringListAt(report, hostsPath, obj.hosts, (h) => {
    const problems = checkNamespacedHost(h, "sidecar");
    return problems.length > 0 ? problems.join("; ") : undefined;
  });
  if (hosts.length === 0 && (!isSet(obj.hosts) || Array.isArray(obj.hosts))) {
    report.error(hostsPath, "an egress listener must contain at least one host");
  }
  const bindPath = childPath(path, "bind");
  const bind = bindAt(report, bindPath, obj.bind);
  const modePath = childPath(path, "captureMode");
  const mode = enumAt(report, modePath, obj.captureMode, CAPTURE_MODES) ?? "DEFAULT";
  if (!isSet(obj.port)) {
    if (bind !== "") report.warn(bindPath, "bind has no effect on a catch-all egress listener without port");
    return { catchAll: true };
  }
  const portPath = childPath(path, "port");
  const rules = { nameRequired: false, protocolRequired: false, allowZero: true, allowTargetPort: false };
  const port = portAt(report, portPath, obj.port, rules);
  if (port === undefined) return undefined;
  if (port.number !== 0) return { port: port.number };
  if (!bind.startsWith(UNIX_ADDRESS_PREFIX)) {
    report.error(bindPath, "egress listeners with port 0 must bind to a unix:// domain socket");
  } else {
    const problem = checkUnixAddress(bind.slice(UNIX_ADDRESS_PREFIX.length));
    if (problem) report.error(bindPath, problem);
  }
  if (mode !== "DEFAULT" && mode !== "NONE") {
    report.error(modePath, "captureMode must be DEFAULT or NONE for unix domain socket listeners");
  }
  return { unix: bind };
}
