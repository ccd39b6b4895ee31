import { childPath, type ValidationReport } from "../validation/report.ts";
import { arrayAt, objectAt, stringAt } from "../validation/fields.ts";
import type { ValidationContext } from "../validation/context.ts";
import { checkNamespacedHost } from "../validation/hosts.ts";
import { isIp } from "../validation/ip.ts";
import { isDnsLabel } from "../validation/labels.ts";
import { isHttpProtocol, isTlsProtocol, parseProtocol } from "../validation/ports.ts";
import { selectorLabelsAt } from "../validation/selector.ts";
import { isSet, stringListAt } from "../validation/values.ts";
import { type Port, portAt } from "./port.ts";
import { checkDefaultEndpoint } from "./sidecar_listeners.ts";
import { serverTlsAt, type ServerTLSSettings } from "./tls_settings.ts";
import { checkUnixAddress, UNIX_ADDRESS_PREFIX } from "./workload_entry.ts";

/** One listener of a gateway: a port, the hosts it serves, and TLS. */
export interface Server {
  /** The port the gateway listens on; its name must be unique across the gateway's servers. */
  readonly port: Port;
  /** IP or `unix://` socket to bind to; default all addresses. */
  readonly bind?: string;
  /** `namespace/host` entries (or bare hosts) of virtual services that may bind to this server. */
  readonly hosts: readonly string[];
  /** TLS of the listener; absent means plain text. */
  readonly tls?: ServerTLSSettings;
  /** Where traffic goes when no virtual service claims it: `127.0.0.1:PORT`, `:PORT` or `unix:///path`. */
  readonly defaultEndpoint?: string;
  /** Name of the server, for debugging and stats. */
  readonly name?: string;
}

/** A load balancer at the edge of the mesh: the ports and hosts it serves, on the workloads it selects. */
export interface GatewaySpec {
  /** The listeners of the gateway; at least one. */
  readonly servers: readonly Server[];
  /** Labels of the gateway workloads (all namespaces) this configuration applies to. */
  readonly selector?: Readonly<Record<string, string>>;
}

function serverAt(report: ValidationReport, path: string, value: unknown, portNames: Set<string>): void {
  const obj = objectAt(report, path, value, ["port", "bind", "hosts", "tls", "defaultEndpoint", "name"]);
  if (obj === undefined) return;
  const hostsPath = childPath(path, "hosts");
  const hosts = stringListAt(report, hostsPath, obj.hosts, (h) => {
    const problems = checkNamespacedHost(h, "gateway");
    return problems.length > 0 ? problems.join("; ") : undefined;
  });
  if (hosts.length === 0 && (!isSet(obj.hosts) || Array.isArray(obj.hosts))) {
    report.error(hostsPath, "a server must contain at least one host");
  }
  const bindPath = childPath(path, "bind");
  const bind = stringAt(report, bindPath, obj.bind) ?? "";
  const unix = bind.startsWith(UNIX_ADDRESS_PREFIX);
  if (unix) {
    const problem = checkUnixAddress(bind.slice(UNIX_ADDRESS_PREFIX.length));
    if (problem) report.error(bindPath, problem);
  } else if (bind !== "" && !isIp(bind)) {
    report.error(bindPath, `bind "${bind}" is not a valid IP address or unix:// path`);
  }
  const portPath = childPath(path, "port");
  let port: Port | undefined;
  if (!isSet(obj.port)) report.error(portPath, "port is required");
  else {
    port = portAt(report, portPath, obj.port, {
      nameRequired: true,
      protocolRequired: true,
      allowZero: unix,
      allowTargetPort: false,
    });
  }
  if (port && unix && port.number !== 0) {
    report.error(childPath(portPath, "number"), "port number must be 0 for a unix domain socket bind");
  }
  if (port?.name) {
    if (portNames.has(port.name)) {
      report.error(
        childPath(portPath, "name"),
        `port names in servers must be unique: duplicate name "${port.name}"`,
      );
    }
    portNames.add(port.name);
  }
  const tlsPath = childPath(path, "tls");
  const tls = isSet(obj.tls) ? serverTlsAt(report, tlsPath, obj.tls) : undefined;
  const defaultEndpoint = stringAt(report, childPath(path, "defaultEndpoint"), obj.defaultEndpoint);
  if (defaultEndpoint) {
    const problem = checkDefaultEndpoint(defaultEndpoint);
    if (problem) report.error(childPath(path, "defaultEndpoint"), problem);
  }
  stringAt(report, childPath(path, "name"), obj.name);
  const protocol = parseProtocol(port?.protocol ?? "");
  if (!port || protocol === undefined) return;
  if (isTlsProtocol(protocol) && !isSet(obj.tls)) {
    report.error(tlsPath, `server must have TLS settings for ${port.protocol} ports`);
  } else if (!isTlsProtocol(protocol) && tls) {
    const passthrough = tls.mode === "PASSTHROUGH" || tls.mode === "AUTO_PASSTHROUGH";
    if (!isHttpProtocol(protocol)) {
      report.error(
        tlsPath,
        `server cannot have TLS settings for non HTTPS/TLS port protocol ${port.protocol}`,
      );
    } else if (!passthrough || tls.caCertificates || tls.privateKey || tls.serverCertificate) {
      report.error(
        tlsPath,
        "server cannot have TLS settings for plain text HTTP ports; only httpsRedirect is allowed",
      );
    }
  }
  if (tls?.httpsRedirect && !isHttpProtocol(protocol)) {
    report.warn(
      childPath(tlsPath, "httpsRedirect"),
      "tls.httpsRedirect should only be used with HTTP servers",
    );
  }
}

/** Validates a Gateway spec as Istio 1.9 does; the gateway's own name must be a DNS label. */
export function validateGateway(spec: unknown, report: ValidationReport, ctx: ValidationContext): void {
  if (!isDnsLabel(ctx.name)) {
    report.error(
      "metadata.name",
      `invalid gateway name "${ctx.name}"; a gateway name must be a DNS label (no dots)`,
    );
  }
  const obj = objectAt(report, "spec", spec, ["servers", "selector"]);
  if (obj === undefined) return;
  selectorLabelsAt(report, "spec.selector", obj.selector);
  const servers = arrayAt(report, "spec.servers", obj.servers);
  if (servers.length === 0) report.error("spec.servers", "a gateway must have at least one server");
  const portNames = new Set<string>();
  for (const [i, server] of servers.entries()) {
    serverAt(report, childPath("spec.servers", i), server, portNames);
  }
}
