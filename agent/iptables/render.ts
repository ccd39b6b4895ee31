/** Renders a plan as `iptables-restore` input, or as the shell commands a dry run prints. */

import {
  type Command,
  type Family,
  type IptablesPlan,
  type Rule,
  usedChains,
  usedTables,
} from "./rule_set.ts";

/** The restore tool, save tool and plain tool of each family. */
export const TOOLS: Readonly<Record<Family, { restore: string; save: string; plain: string }>> = Object
  .freeze({
    4: Object.freeze({ restore: "iptables-restore", save: "iptables-save", plain: "iptables" }),
    6: Object.freeze({ restore: "ip6tables-restore", save: "ip6tables-save", plain: "ip6tables" }),
  });

/**
 * Renders rules as `iptables-restore --noflush` input: per table, `:CHAIN - [0:0]` for our chains (which
 * creates a chain, or empties it when it exists, so re-applying never fails), then the rules in order.
 */
export function renderRestore(rules: readonly Rule[]): string {
  const lines: string[] = [];
  for (const table of usedTables(rules)) {
    lines.push(`*${table}`);
    for (const chain of usedChains(rules, table)) lines.push(`:${chain} - [0:0]`);
    for (const rule of rules) {
      if (rule.table === table) lines.push([...ruleOp(rule), ...rule.args].map(restoreQuote).join(" "));
    }
    lines.push("COMMIT");
  }
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}

/** The commands a dry run prints: `ip` commands, then `iptables`/`ip6tables` commands, one per line. */
export function renderCommands(plan: IptablesPlan): string {
  const lines = plan.ipCommands.map(commandLine);
  for (const [family, rules] of [[4, plan.v4], [6, plan.v6]] as const) {
    if (!rules) continue;
    const tool = TOOLS[family].plain;
    for (const table of usedTables(rules)) {
      for (const chain of usedChains(rules, table)) {
        lines.push(commandLine({ cmd: tool, args: ["-t", table, "-N", chain] }));
      }
    }
    for (const rule of rules) {
      lines.push(commandLine({ cmd: tool, args: ["-t", rule.table, ...ruleOp(rule), ...rule.args] }));
    }
  }
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}

/** Renders the plan in the form a dry run prints: commands, or restore input when `restoreFormat` is set. */
export function renderDryRun(plan: IptablesPlan, restoreFormat: boolean): string {
  if (!restoreFormat) return renderCommands(plan);
  let text = plan.ipCommands.map(commandLine).map((line) => `${line}\n`).join("");
  text += `# ${TOOLS[4].restore} --noflush\n${renderRestore(plan.v4)}`;
  if (plan.v6) text += `# ${TOOLS[6].restore} --noflush\n${renderRestore(plan.v6)}`;
  return text;
}

/** One command as a POSIX shell line; arguments that need it are single-quoted. */
export function commandLine(command: Command): string {
  return [command.cmd, ...command.args].map(shellQuote).join(" ");
}

function ruleOp(rule: Rule): string[] {
  return rule.position === undefined ? ["-A", rule.chain] : ["-I", rule.chain, String(rule.position)];
}

function shellQuote(arg: string): string {
  if (/^[A-Za-z0-9_.,:/=+@%^!-]+$/.test(arg)) return arg;
  return `'${arg.replaceAll("'", `'"'"'`)}'`;
}

/** iptables-restore splits on whitespace and honours double quotes. */
function restoreQuote(arg: string): string {
  if (arg !== "" && !/[\s"'\\]/.test(arg)) return arg;
  return `"${arg.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
}
