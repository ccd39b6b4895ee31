/**
 * Applies and cleans the capture rules through an injected {@linkcode CommandExecutor}:
 * {@linkcode applyIptables} for `mesh-iptables`, {@linkcode cleanIptables} for `mesh-clean-iptables`.
 * @module
 */

import { buildIptablesPlan } from "./build_plan.ts";
import { type ProbeResult, runCaptureProbe } from "./capture_probe.ts";
import type { CaptureLogger } from "./capture_logger.ts";
import { buildCleanCommands, ipCleanCommands, sweepCounts, sweepScript } from "./clean_plan.ts";
import type { IptablesConfig } from "./config.ts";
import {
  type CommandExecutor,
  CommandFailedError,
  CommandNotFoundError,
  type CommandResult,
} from "./executor.ts";
import { chooseProbeTarget, type ProcessIdentity } from "./probe_target.ts";
import { commandLine, renderDryRun, renderRestore, TOOLS } from "./render.ts";
import type { Command, Family, IptablesPlan, Rule } from "./rule_set.ts";

/** What the runner needs from its caller. */
export interface RunnerDeps {
  /** Runs `iptables-restore`, `ip` and the other commands. */
  readonly exec: CommandExecutor;
  /** Where progress and saved rules are logged. */
  readonly logger: CaptureLogger;
  /** Receives dry-run output (the CLI passes stdout). */
  readonly print: (text: string) => void;
  /** Who runs the validation probe (uid/gid as `-m owner` sees them); required with `runValidation`. */
  readonly identity?: ProcessIdentity;
}

/** What {@linkcode applyIptables} did. */
export interface ApplyOutcome {
  /** The plan that was built from the config. */
  readonly plan: IptablesPlan;
  /** False for dry runs and `skipRuleApply`. */
  readonly applied: boolean;
  /** The validation probe's result; present only with `runValidation`. */
  readonly probe?: ProbeResult;
}

/**
 * `mesh-iptables`. Dry run: prints the plan and calls nothing. Otherwise, unless `skipRuleApply`, removes any
 * earlier capture rules (so applying twice is idempotent), runs the `ip` commands, applies the rules with
 * `iptables-restore --noflush` (and `ip6tables-restore` when IPv6 is enabled), and logs `iptables-save`.
 * Then, with `runValidation`, proves capture works or throws `CaptureValidationError`.
 */
export async function applyIptables(config: IptablesConfig, deps: RunnerDeps): Promise<ApplyOutcome> {
  const { logger } = deps;
  const plan = buildIptablesPlan(config);
  if (config.dryRun) {
    deps.print(renderDryRun(plan, config.restoreFormat));
    if (config.runValidation) {
      logger.warn("Dry run: iptables validation skipped, it needs the rules in place");
    }
    return Object.freeze({ plan, applied: false });
  }
  if (config.skipRuleApply) {
    logger.info("Skipping rule apply (--skip-rule-apply)", {
      rules: renderDryRun(plan, config.restoreFormat),
    });
  } else {
    await removeCaptureRules(config, deps);
    for (const command of plan.ipCommands) await runChecked(deps, command);
    await restore(deps, 4, plan.v4);
    if (plan.v6) await restore(deps, 6, plan.v6);
    await logSaved(deps, plan.v6 ? [4, 6] : [4]);
  }
  if (!config.runValidation) return Object.freeze({ plan, applied: !config.skipRuleApply });
  if (deps.identity === undefined) {
    throw new TypeError(
      "Invalid runner deps: identity (uid and gid of this process) is required with --run-validation",
    );
  }
  const probe = await runCaptureProbe(config, chooseProbeTarget(config, deps.identity), logger);
  return Object.freeze({ plan, applied: !config.skipRuleApply, probe });
}

/**
 * `mesh-clean-iptables`, for IPv4 and IPv6: removes our jumps and marked rules from built-in chains, flushes
 * and deletes our chains in nat and mangle, and undoes the TPROXY routing and IPv6 passthrough address;
 * whatever is already gone is skipped. Dry run: prints the commands for this config and calls nothing.
 */
export async function cleanIptables(config: IptablesConfig, deps: RunnerDeps): Promise<void> {
  if (config.dryRun) {
    deps.print(buildCleanCommands(config).map((command) => `${commandLine(command)}\n`).join(""));
    return;
  }
  await removeCaptureRules(config, deps);
  await logSaved(deps, [4, 6]);
}

/** Sweeps both families, then undoes the `ip` state. IPv6 tools may be missing unless IPv6 is enabled. */
async function removeCaptureRules(config: IptablesConfig, deps: RunnerDeps): Promise<void> {
  for (const family of [4, 6] as const) {
    const tools = TOOLS[family];
    const optional = family === 6 && !config.enableIpv6;
    let saved: CommandResult;
    try {
      saved = await deps.exec(tools.save, []);
    } catch (error) {
      if (optional && error instanceof CommandNotFoundError) {
        deps.logger.warn(`Skipping IPv6 cleanup: ${error.message}`);
        continue;
      }
      throw error;
    }
    if (saved.code !== 0) {
      const failure = new CommandFailedError(tools.save, [], saved);
      if (!optional) throw failure;
      deps.logger.warn("Skipping IPv6 cleanup: the IPv6 tables cannot be read", { error: failure.message });
      continue;
    }
    const script = sweepScript(saved.stdout);
    if (script === "") {
      deps.logger.debug("No capture rules to remove", { family });
      continue;
    }
    deps.logger.info("Removing existing capture rules", { family, ...sweepCounts(script), script });
    await runChecked(deps, { cmd: tools.restore, args: ["--noflush"] }, script);
  }
  for (const command of ipCleanCommands(config)) {
    // `ip rule add` happily adds duplicates, so delete until there is none left.
    const repeat = command.args.includes("rule") ? 64 : 1;
    for (let i = 0; i < repeat; i++) {
      const result = await runQuietly(deps, command);
      if (result === undefined || result.code !== 0) break;
    }
  }
}

async function restore(deps: RunnerDeps, family: Family, rules: readonly Rule[]): Promise<void> {
  const text = renderRestore(rules);
  const tool = TOOLS[family].restore;
  deps.logger.info(`Applying capture rules with ${tool} --noflush`, { family, rules: text });
  await runChecked(deps, { cmd: tool, args: ["--noflush"] }, text);
}

/** Runs a command that must succeed; a restore failure names the input line it rejected. */
async function runChecked(deps: RunnerDeps, command: Command, stdin?: string): Promise<CommandResult> {
  deps.logger.debug("Running", { command: commandLine(command) });
  const result = await deps.exec(command.cmd, command.args, stdin);
  if (result.code === 0) return result;
  let detail = "";
  const line = /line:? (\d+)/i.exec(result.stderr);
  if (stdin !== undefined && line) {
    const text = stdin.split("\n")[Number(line[1]) - 1];
    if (text !== undefined) detail = ` (input line ${line[1]}: "${text}")`;
  }
  throw new CommandFailedError(command.cmd, command.args, result, detail);
}

/** Runs a cleanup command whose failure means "already gone"; a missing `ip` is only worth a warning. */
async function runQuietly(deps: RunnerDeps, command: Command): Promise<CommandResult | undefined> {
  try {
    const result = await deps.exec(command.cmd, command.args);
    deps.logger.debug("Cleanup command", { command: commandLine(command), code: result.code });
    return result;
  } catch (error) {
    if (!(error instanceof CommandNotFoundError)) throw error;
    deps.logger.warn(`Skipping "${commandLine(command)}": ${error.message}`);
    return undefined;
  }
}

/** Logs the resulting tables; best effort, as the rules are already in place. */
async function logSaved(deps: RunnerDeps, families: readonly Family[]): Promise<void> {
  for (const family of families) {
    const tool = TOOLS[family].save;
    try {
      const result = await deps.exec(tool, []);
      if (result.code === 0) deps.logger.info(`${tool} after the change`, { family, output: result.stdout });
      else deps.logger.warn(`${tool} failed`, { family, code: result.code, stderr: result.stderr });
    } catch (error) {
      deps.logger.warn(`${tool} could not run`, { family, error: String(error) });
    }
  }
}
