/** The data model of a capture plan: iptables rules per address family plus the `ip` commands beside them. */

import { ownChains, RULE_COMMENT, type Table, TABLES } from "./constants.ts";

/** An address family: 4 for iptables, 6 for ip6tables. */
export type Family = 4 | 6;

/** One iptables rule: appended to `chain`, or inserted at `position` (1-based) when given. */
export interface Rule {
  /** Table the rule goes in. */
  readonly table: Table;
  /** Chain the rule goes in, built-in or ours. */
  readonly chain: string;
  /** 1-based position for an insert (`-I`); absent appends (`-A`). */
  readonly position?: number;
  /** The rule's match and target arguments, as iptables takes them after the chain. */
  readonly args: readonly string[];
}

/** One external command with its arguments. */
export interface Command {
  /** Program name, looked up on `PATH`. */
  readonly cmd: string;
  /** Arguments, one per element (no shell quoting). */
  readonly args: readonly string[];
}

/** Everything `mesh-iptables` would do: v4 rules, v6 rules (when IPv6 is enabled) and `ip` commands. */
export interface IptablesPlan {
  /** IPv4 rules, in order. */
  readonly v4: readonly Rule[];
  /** IPv6 rules, in order; absent unless IPv6 is enabled. */
  readonly v6?: readonly Rule[];
  /** `ip` commands for the IPv6 passthrough address and the TPROXY mark routing, in run order. */
  readonly ipCommands: readonly Command[];
}

/** The chains the kernel creates; rules in them are not ours to flush and carry {@linkcode RULE_COMMENT}. */
export const BUILTIN_CHAINS: ReadonlySet<string> = new Set([
  "PREROUTING",
  "INPUT",
  "FORWARD",
  "OUTPUT",
  "POSTROUTING",
]);

/**
 * Collects rules in call order. Each rule part is split on spaces, so rules read like iptables lines
 * (`"-p tcp --dport", port, "-j RETURN"`); values are validated and never contain spaces. Rules in built-in
 * chains get the marker comment just before their target.
 */
export class RuleListBuilder {
  readonly #rules: Rule[] = [];

  /** Appends a rule to the end of `chain`. */
  append(table: Table, chain: string, ...parts: (string | number)[]): void {
    this.#rules.push(Object.freeze({ table, chain, args: Object.freeze(this.#mark(chain, words(parts))) }));
  }

  /** Inserts a rule at 1-based `position` of `chain` when applied. */
  insert(table: Table, chain: string, position: number, ...parts: (string | number)[]): void {
    this.#rules.push(
      Object.freeze({ table, chain, position, args: Object.freeze(this.#mark(chain, words(parts))) }),
    );
  }

  /** The rules collected so far, frozen. */
  build(): readonly Rule[] {
    return Object.freeze([...this.#rules]);
  }

  #mark(chain: string, args: string[]): string[] {
    if (!BUILTIN_CHAINS.has(chain)) return args;
    const target = args.indexOf("-j");
    const at = target < 0 ? args.length : target;
    return [...args.slice(0, at), "-m", "comment", "--comment", RULE_COMMENT, ...args.slice(at)];
  }
}

function words(parts: (string | number)[]): string[] {
  return parts.flatMap((part) => String(part).split(" ").filter((word) => word !== ""));
}

/** Our chains a rule list uses in `table` (as the rule's chain or its jump target), in declaration order. */
export function usedChains(rules: readonly Rule[], table: Table): string[] {
  const used = new Set<string>();
  for (const rule of rules) {
    if (rule.table !== table) continue;
    used.add(rule.chain);
    const target = rule.args.indexOf("-j");
    if (target >= 0) used.add(rule.args[target + 1]);
  }
  return ownChains(table).filter((chain) => used.has(chain));
}

/** The tables a rule list touches, in rendering order. */
export function usedTables(rules: readonly Rule[]): Table[] {
  return TABLES.filter((table) => rules.some((rule) => rule.table === table));
}
