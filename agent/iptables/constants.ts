/** Names and fixed values of the traffic-capture rules: chains, tables, ports, marks. */

/** The chains the agent owns, per table. Nothing else is ever flushed or deleted. */
export const CHAIN: Readonly<{
  inbound: "MESH_INBOUND";
  redirect: "MESH_REDIRECT";
  inRedirect: "MESH_IN_REDIRECT";
  output: "MESH_OUTPUT";
  divert: "MESH_DIVERT";
  tproxy: "MESH_TPROXY";
}> = Object.freeze({
  inbound: "MESH_INBOUND",
  redirect: "MESH_REDIRECT",
  inRedirect: "MESH_IN_REDIRECT",
  output: "MESH_OUTPUT",
  divert: "MESH_DIVERT",
  tproxy: "MESH_TPROXY",
});

/** Our chains in the nat table, in the order they are declared. */
export const NAT_CHAINS: readonly string[] = Object.freeze([
  CHAIN.inbound,
  CHAIN.redirect,
  CHAIN.inRedirect,
  CHAIN.output,
]);

/** Our chains in the mangle table (TPROXY mode), in the order they are declared. */
export const MANGLE_CHAINS: readonly string[] = Object.freeze([CHAIN.inbound, CHAIN.divert, CHAIN.tproxy]);

/** Tables the rules touch, in rendering order. */
export const TABLES: readonly ["nat", "mangle"] = Object.freeze(["nat", "mangle"] as const);

/** A table the rules touch. */
export type Table = typeof TABLES[number];

/** The chains the agent owns in one table. */
export function ownChains(table: string): readonly string[] {
  if (table === "nat") return NAT_CHAINS;
  if (table === "mangle") return MANGLE_CHAINS;
  return [];
}

/**
 * Comment carried by every rule we put in a chain we do not own (PREROUTING, OUTPUT). Cleaning finds those
 * rules by it, so rules from any earlier configuration (other uids, interfaces, DNS) are removed too.
 */
export const RULE_COMMENT = "mesh-capture";

/** Port of the agent's DNS proxy, the target of DNS capture. */
export const DNS_CAPTURE_PORT = "15053";

/** Source address the proxy binds for inbound passthrough connections to the app (IPv4). */
export const INBOUND_PASSTHROUGH_V4 = "127.0.0.6/32";

/** Source address the proxy binds for inbound passthrough connections to the app (IPv6). */
export const INBOUND_PASSTHROUGH_V6 = "::6/128";

/** Mark the proxy's outbound connections to its own pod carry in TPROXY mode, so inbound capture skips them. */
export const OUTBOUND_MARK = "1338";

/** SSH is never captured when all inbound ports are. */
export const SSH_PORT = "22";

/** Default values of the options, as in the reference. */
export const DEFAULTS: Readonly<{
  proxyPort: 15001;
  inboundCapturePort: 15006;
  inboundTunnelPort: 15008;
  probePort: 15002;
  probeTimeout: "5s";
  proxyUser: "mesh-proxy";
  proxyId: 1337;
  tproxyMark: "1337";
  tproxyRouteTable: "133";
}> = Object.freeze({
  proxyPort: 15001,
  inboundCapturePort: 15006,
  inboundTunnelPort: 15008,
  probePort: 15002,
  probeTimeout: "5s",
  proxyUser: "mesh-proxy",
  proxyId: 1337,
  tproxyMark: "1337",
  tproxyRouteTable: "133",
});
