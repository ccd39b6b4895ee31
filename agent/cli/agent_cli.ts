import type { CommandSpec } from "@mesh/shared/cli/command_spec";
import type { FlagSpec } from "@mesh/shared/cli/flag_spec";
import { loggingFlagsFor } from "@mesh/shared/cli/logging_flags";
import { requestCommand } from "@mesh/shared/cli/request_command";
import { versionCommand } from "@mesh/shared/cli/version_command";
import { EnvSettings } from "@mesh/shared/env/env_settings";
import { warnIneffectiveSettings } from "@mesh/shared/env/ineffective_settings";
import { AGENT_SCOPES, PROXY_FLAGS } from "./flags.ts";
import { UsageError } from "@mesh/shared/cli/command_spec";
import { logFlagsFrom } from "@mesh/shared/cli/logging_flags";
import { LogManager } from "@mesh/shared/log/log_manager";
import { buildInfo } from "@mesh/shared/version/build_info";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { startProxyAgent } from "../agent.ts";

/** Resolves on the first SIGINT or SIGTERM with the signal's name. */
function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      Deno.addSignalListener(signal, () => resolve(signal));
    }
  });
}
import { iptablesCommands } from "./iptables_commands.ts";
import { waitCommand } from "./wait_command.ts";

/** Flags every `mesh-agent` command accepts: the logging flags. */
export const AGENT_INHERITED_FLAGS: readonly FlagSpec[] = loggingFlagsFor(AGENT_SCOPES);

/** The `mesh-agent` command tree, reading `environment` through the env registry. */
export function agentCli(environment: Readonly<Record<string, string>>): CommandSpec {
  return {
    name: "mesh-agent",
    summary: "Mesh agent",
    description: "Mesh agent runs in the sidecar or gateway container and bootstraps the proxy.",
    subcommands: [
      {
        name: "proxy",
        summary: "Mesh proxy agent",
        flags: PROXY_FLAGS,
        args: [{ name: "role", required: false }],
        async run(ctx) {
          const env = new EnvSettings("agent", environment);
          const role = ctx.args[0] ?? "sidecar";
          if (role !== "sidecar" && role !== "router") {
            throw new UsageError(`Unknown proxy role "${role}": expected sidecar or router`, ctx.path);
          }
          const logs = new LogManager(AGENT_SCOPES, logFlagsFrom(ctx.flags));
          warnIneffectiveSettings(logs.scope("default"), env, "proxy", ctx.explicit);
          const agent = await startProxyAgent({
            role,
            env,
            meshConfigFile: ctx.flags.meshConfig as string,
            domain: ctx.flags.domain as string,
            serviceCluster: ctx.flags.serviceCluster as string,
            templateFile: ctx.flags.templateFile as string,
            proxyLogLevel: ctx.flags.proxyLogLevel as string,
            proxyComponentLogLevel: ctx.flags.proxyComponentLogLevel as string,
            concurrency: ctx.flags.concurrency as number,
            outlierLogPath: ctx.flags.outlierLogPath as string,
            stsPort: ctx.flags.stsPort as number,
            tokenManagerPlugin: ctx.flags.tokenManagerPlugin as string,
            version: buildInfo().version,
            logs,
            metrics: new Metrics("agent", { version: buildInfo().version, tag: buildInfo().tag }),
          });
          const outcome = await Promise.race([untilSignal(), agent.quitRequested, agent.failed]);
          if (outcome instanceof Error) {
            logs.scope("default").error("stopping: the agent cannot go on", { error: outcome.message });
          } else {
            logs.scope("default").info("draining and stopping", { reason: outcome });
          }
          await agent.stop();
          logs.close();
          return outcome instanceof Error ? 1 : 0;
        },
      },
      waitCommand,
      ...iptablesCommands(environment),
      requestCommand("http://127.0.0.1:15000", "Makes an HTTP request to the proxy admin API"),
      versionCommand,
    ],
  };
}
