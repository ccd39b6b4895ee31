/**
 * What `mesh-clean-iptables` removes. Two views of the same job: {@linkcode sweepScript} reads the live
 * `iptables-save` output and removes exactly what is there; {@linkcode buildCleanCommands} is the
 * state-free list a dry run prints for a given config.
 * @module
 */

import { buildIptablesPlan } from "./build_plan.ts";
import type { IptablesConfig } from "./config.ts";
import { INBOUND_PASSTHROUGH_V6, ownChains, RULE_COMMENT, TABLES } from "./constants.ts";
import { TOOLS } from "./render.ts";
import { BUILTIN_CHAINS, type Command, type Family } from "./rule_set.ts";

/**
 * Turns `iptables-save` output into `iptables-restore --noflush` input that deletes every rule jumping to
 * one of our chains or carrying our comment, then flushes and deletes our chains. One transaction per table,
 * so no rule is ever left pointing at a deleted chain. Returns "" when nothing of ours is present.
 */
export function sweepScript(saveText: string): string {
  const out: string[] = [];
  let table = "";
  let deletes: string[] = [];
  let chains: string[] = [];
  for (const raw of saveText.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    if (line.startsWith("*")) {
      [table, deletes, chains] = [line.slice(1), [], []];
    } else if (line.startsWith(":")) {
      const name = line.slice(1).split(/\s+/)[0];
      if (ownChains(table).includes(name)) chains.push(name);
    } else if (line.startsWith("-A ")) {
      const tokens = tokenize(line);
      const chain = tokens[1];
      if (!ownChains(table).includes(chain) && isOurs(table, tokens)) deletes.push(`-D ${line.slice(3)}`);
    } else if (line === "COMMIT") {
      if (deletes.length > 0 || chains.length > 0) {
        out.push(
          `*${table}`,
          ...deletes,
          ...chains.map((c) => `-F ${c}`),
          ...chains.map((c) => `-X ${c}`),
          "COMMIT",
        );
      }
      table = "";
    }
  }
  return out.length === 0 ? "" : `${out.join("\n")}\n`;
}

/** Counts the rules and chains a sweep script removes, for logging. */
export function sweepCounts(script: string): { rules: number; chains: number } {
  const lines = script.split("\n");
  return {
    rules: lines.filter((line) => line.startsWith("-D ")).length,
    chains: lines.filter((line) => line.startsWith("-X ")).length,
  };
}

function isOurs(table: string, tokens: string[]): boolean {
  for (let i = 0; i < tokens.length - 1; i++) {
    if ((tokens[i] === "-j" || tokens[i] === "-g") && ownChains(table).includes(tokens[i + 1])) return true;
    if (tokens[i] === "--comment" && unquote(tokens[i + 1]) === RULE_COMMENT) return true;
  }
  return false;
}

function tokenize(line: string): string[] {
  return line.match(/"(?:[^"\\]|\\.)*"|\S+/g) ?? [];
}

function unquote(token: string): string {
  return token.startsWith('"') && token.endsWith('"') ? token.slice(1, -1).replace(/\\(.)/g, "$1") : token;
}

/** The `ip` commands that undo the plan's routing: TPROXY mark rule and route, and the IPv6 passthrough address. */
export function ipCleanCommands(config: IptablesConfig): Command[] {
  const { tproxyMark: mark, tproxyRouteTable: table } = config;
  return [
    { cmd: "ip", args: ["-f", "inet", "rule", "del", "fwmark", mark, "lookup", table] },
    { cmd: "ip", args: ["-f", "inet", "route", "del", "local", "default", "dev", "lo", "table", table] },
    { cmd: "ip", args: ["-6", "addr", "del", INBOUND_PASSTHROUGH_V6, "dev", "lo"] },
  ];
}

/**
 * The commands a dry-run clean prints, for IPv4 and IPv6: delete every rule the config could have put in
 * built-in chains (both interception modes, DNS capture on, all ports and ranges), flush and delete our
 * chains, undo the `ip` routing. Each may fail harmlessly when its target is already gone.
 */
export function buildCleanCommands(config: IptablesConfig): Command[] {
  const variants = (["REDIRECT", "TPROXY"] as const).flatMap((interceptionMode) => [
    { ...config, interceptionMode, dnsCapture: true, enableIpv6: true },
    {
      ...config,
      interceptionMode,
      dnsCapture: true,
      enableIpv6: true,
      inboundPorts: "*" as const,
      serviceCidrs: "*" as const,
    },
  ]);
  const commands: Command[] = [];
  for (const family of [4, 6] as const) {
    const tool = TOOLS[family].plain;
    const seen = new Set<string>();
    for (const variant of variants) {
      const plan = buildIptablesPlan(variant);
      for (const rule of rulesOf(plan, family)) {
        if (!BUILTIN_CHAINS.has(rule.chain)) continue;
        const args = ["-t", rule.table, "-D", rule.chain, ...rule.args];
        const key = args.join(" ");
        if (seen.has(key)) continue;
        seen.add(key);
        commands.push({ cmd: tool, args });
      }
    }
    for (const table of TABLES) {
      for (const chain of ownChains(table)) commands.push({ cmd: tool, args: ["-t", table, "-F", chain] });
      for (const chain of ownChains(table)) commands.push({ cmd: tool, args: ["-t", table, "-X", chain] });
    }
  }
  return [...commands, ...ipCleanCommands(config)];
}

function rulesOf(plan: ReturnType<typeof buildIptablesPlan>, family: Family) {
  return (family === 4 ? plan.v4 : plan.v6) ?? [];
}
