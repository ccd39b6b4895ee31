/**
 * Where the capture probe dials, chosen from the config and who runs the probe. The rules only redirect some
 * connections, so the probe must make one they do redirect:
 * - run as the proxy's first uid: `127.0.0.6:<probe port>` over lo → MESH_IN_REDIRECT → inbound capture port
 *   (Istio's own validation path);
 * - run as anyone else: an address the outbound rules capture (a service CIDR address, or any address when
 *   all outbound traffic or the probe port is captured) → MESH_REDIRECT → proxy port.
 * @module
 */

import { type Cidr, cidrContains, formatIp, parseIp } from "./cidr.ts";
import type { IptablesConfig } from "./config.ts";

/** The uid and primary gid of the process that will run the probe (what `-m owner` sees). */
export interface ProcessIdentity {
  /** Numeric user id. */
  readonly uid: number;
  /** Numeric primary group id. */
  readonly gid: number;
}

/** Where the probe connects, and the listener port it should arrive at once redirected. */
export interface ProbeTarget {
  /** IP address the probe connects to, as text. */
  readonly hostname: string;
  /** Port the probe connects to. */
  readonly port: number;
  /** Address family of `hostname`. */
  readonly family: 4 | 6;
  /** The proxy listener port the redirected connection must arrive at (outbound or inbound capture port). */
  readonly expectedPort: number;
  /** Which rule path the probe exercises, for messages. */
  readonly path: string;
}

/** Documentation addresses (RFC 5737): never a real peer, so a probe to one reaches nothing unless captured. */
const TEST_NET_V4 = ["192.0.2.1", "198.51.100.1", "203.0.113.1"];

/** Picks the probe target; throws Error explaining why when no connection of this process would be captured. */
export function chooseProbeTarget(config: IptablesConfig, identity: ProcessIdentity): ProbeTarget {
  const port = config.probePort;
  if (port === config.proxyPort || port === config.inboundCapturePort) {
    throw new RangeError(
      `Invalid --iptables-probe-port "${port}": expected a port other than the proxy port ${config.proxyPort} ` +
        `and the inbound capture port ${config.inboundCapturePort}, or a captured probe could not be told apart`,
    );
  }
  if (config.outboundPortsExclude.includes(port)) {
    throw new Error(
      `Cannot validate capture: probe port ${port} is in --mesh-local-outbound-ports-exclude, so connections to it are never captured`,
    );
  }
  const who = `uid ${identity.uid}, gid ${identity.gid}`;
  const exemptUid = config.proxyUids.includes(identity.uid);
  const exemptGid = config.proxyGids.includes(identity.gid);
  if (exemptUid || exemptGid) {
    // Only the first uid's loopback rules are reached: the next rule returns lo traffic of every other owner.
    const loopbackCaptured = identity.uid === config.proxyUids[0] ||
      (config.serviceCidrs !== "*" && config.serviceCidrs.some((cidr) => cidr.loopback));
    if (!loopbackCaptured) {
      throw new Error(
        `Cannot validate capture as ${who}: this process is exempt from outbound capture as a proxy uid/gid, ` +
          `and only the first proxy uid (${config.proxyUids[0]}) has its loopback calls redirected; ` +
          `run the validation as uid ${config.proxyUids[0]} or as a non-proxy user`,
      );
    }
    return target(
      "127.0.0.6",
      port,
      4,
      config.inboundCapturePort,
      "proxy uid over lo to 127.0.0.6 (MESH_IN_REDIRECT)",
    );
  }
  const outbound = outboundAddress(config);
  if (outbound === undefined) {
    throw new Error(
      `Cannot validate capture as ${who}: outbound capture is off for the probe (--mesh-service-cidr is empty and ` +
        `--mesh-outbound-ports does not list probe port ${port}), and this process is not the proxy uid ` +
        `${config.proxyUids[0]}; set --mesh-service-cidr or run the validation as uid ${config.proxyUids[0]}`,
    );
  }
  return target(outbound.hostname, port, outbound.family, config.proxyPort, outbound.path);
}

function target(
  hostname: string,
  port: number,
  family: 4 | 6,
  expectedPort: number,
  path: string,
): ProbeTarget {
  return Object.freeze({ hostname, port, family, expectedPort, path });
}

function outboundAddress(
  config: IptablesConfig,
): { hostname: string; family: 4 | 6; path: string } | undefined {
  const excluded = (family: 4 | 6, bytes: readonly number[]) =>
    config.serviceExcludeCidrs.some((cidr) => cidr.family === family && cidrContains(cidr, bytes));
  const wildcard = config.serviceCidrs === "*" || config.outboundPortsInclude.includes(config.probePort);
  if (wildcard) {
    const hostname = TEST_NET_V4.find((text) => !excluded(4, parseIp(text)!.bytes));
    if (hostname !== undefined) {
      const why = config.serviceCidrs === "*" ? "all outbound traffic" : `outbound port ${config.probePort}`;
      return { hostname, family: 4, path: `${why} captured, via ${hostname} (MESH_REDIRECT)` };
    }
  }
  if (config.serviceCidrs === "*") return undefined;
  const ordered = [...config.serviceCidrs].sort((a, b) => a.family - b.family);
  for (const cidr of ordered) {
    for (const bytes of candidates(cidr)) {
      if (excluded(cidr.family, bytes) || isLocalhost(cidr.family, bytes)) continue;
      const hostname = formatIp(bytes);
      return {
        hostname,
        family: cidr.family,
        path: `service CIDR ${cidr.text} captured, via ${hostname} (MESH_REDIRECT)`,
      };
    }
  }
  return undefined;
}

/** The first host addresses of a range, then the network address itself (for /32, /128 and tiny ranges). */
function candidates(cidr: Cidr): number[][] {
  const hostBits = (cidr.family === 4 ? 32 : 128) - cidr.prefix;
  const plus = (n: number) => {
    const bytes = [...cidr.bytes];
    bytes[bytes.length - 1] += n;
    return bytes;
  };
  return hostBits >= 2 ? [plus(1), plus(2)] : [[...cidr.bytes]];
}

/** 127.0.0.1 and ::1 are returned by MESH_OUTPUT before any capture rule. */
function isLocalhost(family: 4 | 6, bytes: readonly number[]): boolean {
  return family === 4
    ? bytes.join(".") === "127.0.0.1"
    : bytes.every((byte, i) => byte === (i === 15 ? 1 : 0));
}
