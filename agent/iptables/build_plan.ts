/**
 * The pure rule builder: config → {@linkcode IptablesPlan}. Rule order and semantics follow Istio 1.9's
 * `istio-iptables` with our chain names; the few deliberate differences are noted where they are made.
 * @module
 */

import type { Cidr } from "./cidr.ts";
import type { IptablesConfig } from "./config.ts";
import {
  CHAIN,
  DNS_CAPTURE_PORT,
  INBOUND_PASSTHROUGH_V4,
  INBOUND_PASSTHROUGH_V6,
  OUTBOUND_MARK,
  SSH_PORT,
} from "./constants.ts";
import { type Command, type Family, type IptablesPlan, type Rule, RuleListBuilder } from "./rule_set.ts";

const LOCALHOST: Readonly<Record<Family, string>> = { 4: "127.0.0.1/32", 6: "::1/128" };
const PASSTHROUGH: Readonly<Record<Family, string>> = {
  4: INBOUND_PASSTHROUGH_V4,
  6: INBOUND_PASSTHROUGH_V6,
};

/** Builds the rules for IPv4 (always) and IPv6 (when enabled), and the `ip` commands. Pure. */
export function buildIptablesPlan(config: IptablesConfig): IptablesPlan {
  return Object.freeze({
    v4: familyRules(config, 4),
    v6: config.enableIpv6 ? familyRules(config, 6) : undefined,
    ipCommands: Object.freeze(ipCommands(config)),
  });
}

/** The `ip` commands of a plan: the IPv6 passthrough address, and the TPROXY mark routing. */
function ipCommands(config: IptablesConfig): Command[] {
  const commands: Command[] = [];
  // The proxy binds ::6 for inbound passthrough; MESH_OUTPUT exempts that source, as 127.0.0.6 for IPv4.
  if (config.enableIpv6) commands.push(ip("-6", "addr", "add", PASSTHROUGH[6], "dev", "lo"));
  if (tproxyInbound(config)) {
    const { tproxyMark: mark, tproxyRouteTable: table } = config;
    // Packets marked in MESH_DIVERT are routed through table `table`, whose only route delivers locally.
    commands.push(ip("-f", "inet", "rule", "add", "fwmark", mark, "lookup", table));
    commands.push(ip("-f", "inet", "route", "add", "local", "default", "dev", "lo", "table", table));
  }
  return commands;
}

function ip(...args: string[]): Command {
  return Object.freeze({ cmd: "ip", args: Object.freeze(args) });
}

function tproxyInbound(config: IptablesConfig): boolean {
  return config.interceptionMode === "TPROXY" && hasInboundPorts(config);
}

function hasInboundPorts(config: IptablesConfig): boolean {
  return config.inboundPorts === "*" || config.inboundPorts.length > 0;
}

/** Facts of one family's rules derived once from the config. */
interface FamilyView {
  readonly family: Family;
  readonly config: IptablesConfig;
  /** TPROXY applies to IPv4 only, as in the reference; IPv6 inbound is always redirected in nat. */
  readonly tproxy: boolean;
  /** DNS capture is IPv4 only, as in the reference: the agent's DNS proxy listens on 127.0.0.1. */
  readonly dns: boolean;
  readonly include: "*" | readonly Cidr[];
  readonly exclude: readonly Cidr[];
  /** A loopback range in the include list means app-to-self traffic over lo is captured too. */
  readonly captureLoopback: boolean;
}

function familyRules(config: IptablesConfig, family: Family): readonly Rule[] {
  const view: FamilyView = {
    family,
    config,
    tproxy: family === 4 && config.interceptionMode === "TPROXY",
    dns: family === 4 && config.dnsCapture,
    include: config.serviceCidrs === "*" ? "*" : config.serviceCidrs.filter((cidr) => cidr.family === family),
    exclude: config.serviceExcludeCidrs.filter((cidr) => cidr.family === family),
    captureLoopback: config.serviceCidrs !== "*" && config.serviceCidrs.some((cidr) => cidr.loopback),
  };
  const b = new RuleListBuilder();
  // Traffic from a VM on a virtual interface is not inbound traffic of this workload.
  for (const iface of config.virtualInterfaces) b.insert("nat", "PREROUTING", 1, "-i", iface, "-j RETURN");
  // The proxy's tunnel port is reached directly, never redirected.
  b.append("nat", CHAIN.inbound, "-p tcp --dport", config.inboundTunnelPort, "-j RETURN");
  b.append("nat", CHAIN.redirect, "-p tcp -j REDIRECT --to-ports", config.proxyPort);
  b.append("nat", CHAIN.inRedirect, "-p tcp -j REDIRECT --to-ports", config.inboundCapturePort);
  inboundRules(b, view);
  outputRules(b, view);
  if (view.dns) dnsUdpRules(b, view);
  if (view.tproxy) tproxyMarkRules(b, view);
  return b.build();
}

/** PREROUTING → MESH_INBOUND: which inbound ports go to the inbound capture port (nat or TPROXY). */
function inboundRules(b: RuleListBuilder, view: FamilyView): void {
  const { config } = view;
  if (!hasInboundPorts(config)) return;
  const table = view.tproxy ? "mangle" : "nat";
  const mark = config.tproxyMark;
  if (view.tproxy) {
    // Packets of established inbound connections are marked and routed to lo, where the proxy's socket is.
    b.append("mangle", CHAIN.divert, "-j MARK --set-mark", mark);
    b.append("mangle", CHAIN.divert, "-j ACCEPT");
    b.append(
      "mangle",
      CHAIN.tproxy,
      "! -d",
      LOCALHOST[4],
      "-p tcp -j TPROXY --tproxy-mark",
      `${mark}/0xffffffff`,
      "--on-port",
      config.inboundCapturePort,
    );
  }
  b.append(table, "PREROUTING", "-p tcp -j", CHAIN.inbound);
  if (view.tproxy) {
    // Beyond the reference: in TPROXY mode the nat tunnel-port rule is never reached, so mangle returns it too.
    b.append("mangle", CHAIN.inbound, "-p tcp --dport", config.inboundTunnelPort, "-j RETURN");
  }
  if (config.inboundPorts === "*") {
    for (const port of [SSH_PORT, ...config.localExcludePorts]) {
      b.append(table, CHAIN.inbound, "-p tcp --dport", port, "-j RETURN");
    }
    if (view.tproxy) {
      b.append("mangle", CHAIN.inbound, "-p tcp -m conntrack --ctstate RELATED,ESTABLISHED -j", CHAIN.divert);
      b.append("mangle", CHAIN.inbound, "-p tcp -j", CHAIN.tproxy);
    } else {
      b.append("nat", CHAIN.inbound, "-p tcp -j", CHAIN.inRedirect);
    }
    return;
  }
  for (const port of config.inboundPorts) {
    if (view.tproxy) {
      b.append(
        "mangle",
        CHAIN.inbound,
        "-p tcp --dport",
        port,
        "-m conntrack --ctstate RELATED,ESTABLISHED -j",
        CHAIN.divert,
      );
      b.append("mangle", CHAIN.inbound, "-p tcp --dport", port, "-j", CHAIN.tproxy);
    } else {
      b.append("nat", CHAIN.inbound, "-p tcp --dport", port, "-j", CHAIN.inRedirect);
    }
  }
}

/** OUTPUT → MESH_OUTPUT: exemptions first (ports, passthrough, proxy uid/gid, localhost), then captures. */
function outputRules(b: RuleListBuilder, view: FamilyView): void {
  const { config, family } = view;
  const localhost = LOCALHOST[family];
  b.append("nat", "OUTPUT", "-p tcp -j", CHAIN.output);
  // Port exclusions come before the loopback rules so they also hold for app-to-self traffic.
  for (const port of config.outboundPortsExclude) {
    b.append("nat", CHAIN.output, "-p tcp --dport", port, "-j RETURN");
  }
  // The proxy's inbound passthrough connections to the app bind this source address.
  b.append("nat", CHAIN.output, "-o lo -s", PASSTHROUGH[family], "-j RETURN");
  // With DNS capture, TCP port 53 over lo is left to the DNS rule below instead of the loopback rules.
  const notDns = view.dns ? "-p tcp ! --dport 53" : "";
  const owners = [
    ...config.proxyUids.map((id) => ["--uid-owner", id] as const),
    ...config.proxyGids.map((id) => ["--gid-owner", id] as const),
  ];
  // Beyond the reference: the gid rules exempt DNS like the uid rules do (Istio forgets it for gids).
  for (const [match, id] of owners) {
    // The proxy calling a service VIP that resolves to this pod: app → proxy → proxy inbound → app.
    b.append(
      "nat",
      CHAIN.output,
      "-o lo ! -d",
      localhost,
      notDns,
      "-m owner",
      match,
      id,
      "-j",
      CHAIN.inRedirect,
    );
    // The app calling itself over lo is not captured, unless a loopback range was asked for explicitly.
    if (!view.captureLoopback) {
      b.append("nat", CHAIN.output, "-o lo", notDns, "-m owner !", match, id, "-j RETURN");
    }
    // The proxy's own outbound traffic is never captured again (no loops).
    b.append("nat", CHAIN.output, "-m owner", match, id, "-j RETURN");
  }
  if (view.dns) b.append("nat", CHAIN.output, "-p tcp --dport 53 -j REDIRECT --to-ports", DNS_CAPTURE_PORT);
  b.append("nat", CHAIN.output, "-d", localhost, "-j RETURN");
  for (const cidr of view.exclude) b.append("nat", CHAIN.output, "-d", cidr.text, "-j RETURN");
  for (const port of config.outboundPortsInclude) {
    b.append("nat", CHAIN.output, "-p tcp --dport", port, "-j", CHAIN.redirect);
  }
  if (view.include === "*") {
    b.append("nat", CHAIN.output, "-j", CHAIN.redirect);
    // Traffic from a VM is outbound traffic: inserted before the RETURN above, so it wins.
    for (const iface of config.virtualInterfaces) {
      b.insert("nat", "PREROUTING", 1, "-i", iface, "-j", CHAIN.redirect);
    }
  } else if (view.include.length > 0) {
    for (const cidr of view.include) {
      for (const iface of config.virtualInterfaces) {
        b.insert("nat", "PREROUTING", 1, "-i", iface, "-d", cidr.text, "-j", CHAIN.redirect);
      }
      b.append("nat", CHAIN.output, "-d", cidr.text, "-j", CHAIN.redirect);
    }
    b.append("nat", CHAIN.output, "-j RETURN");
  }
}

/** UDP DNS from the app goes to the agent's DNS proxy; the proxy's own upstream queries do not. */
function dnsUdpRules(b: RuleListBuilder, view: FamilyView): void {
  for (const id of view.config.proxyUids) {
    b.append("nat", "OUTPUT", "-p udp --dport 53 -m owner --uid-owner", id, "-j RETURN");
  }
  for (const id of view.config.proxyGids) {
    b.append("nat", "OUTPUT", "-p udp --dport 53 -m owner --gid-owner", id, "-j RETURN");
  }
  b.append("nat", "OUTPUT", "-p udp --dport 53 -j REDIRECT --to-ports", DNS_CAPTURE_PORT);
}

/** TPROXY bookkeeping: keep the proxy's mark on the connection, and never capture the proxy's own traffic. */
function tproxyMarkRules(b: RuleListBuilder, view: FamilyView): void {
  const { config } = view;
  const mark = config.tproxyMark;
  // The mark set by the proxy's original-source listener is saved on the connection...
  b.append("mangle", "PREROUTING", "-p tcp -m mark --mark", mark, "-j CONNMARK --save-mark");
  // ...packets already carrying it are not marked again on their way back to the app...
  b.append("mangle", "OUTPUT", "-p tcp -o lo -m mark --mark", mark, "-j RETURN");
  // ...the proxy's connections to its own pod address are told apart from the app's...
  for (const id of config.proxyUids) {
    b.append(
      "mangle",
      "OUTPUT",
      "! -d",
      LOCALHOST[4],
      "-p tcp -o lo -m owner --uid-owner",
      id,
      "-j MARK --set-mark",
      OUTBOUND_MARK,
    );
  }
  for (const id of config.proxyGids) {
    b.append(
      "mangle",
      "OUTPUT",
      "! -d",
      LOCALHOST[4],
      "-p tcp -o lo -m owner --gid-owner",
      id,
      "-j MARK --set-mark",
      OUTBOUND_MARK,
    );
  }
  // ...and replies restore the mark so they follow the TPROXY route.
  b.append("mangle", "OUTPUT", "-p tcp -m connmark --mark", mark, "-j CONNMARK --restore-mark");
  // Inbound capture skips marked packets, proxy passthrough, and app-to-self traffic over lo.
  b.insert("mangle", CHAIN.inbound, 1, "-p tcp -m mark --mark", mark, "-j RETURN");
  b.insert("mangle", CHAIN.inbound, 2, "-p tcp -s", INBOUND_PASSTHROUGH_V4, "-i lo -j RETURN");
  b.insert("mangle", CHAIN.inbound, 3, "-p tcp -i lo -m mark ! --mark", OUTBOUND_MARK, "-j RETURN");
}
