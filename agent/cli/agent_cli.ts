import type { CommandSpec } from "../../shared/cli/command_spec.ts";
import type { FlagSpec } from "../../shared/cli/flag_spec.ts";
import { loggingFlagsFor } from "../../shared/cli/logging_flags.ts";
import { requestCommand } from "../../shared/cli/request_command.ts";
import { versionCommand } from "../../shared/cli/version_command.ts";
import { EnvSettings } from "../../shared/env/env_settings.ts";
import { AGENT_SCOPES, PROXY_FLAGS } from "./flags.ts";
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
        run(ctx) {
          new EnvSettings("agent", environment);
          ctx.io.stderr(
            "Error: the proxy agent (bootstrap, SDS, xDS proxy, proxy supervision) is not built yet in this " +
              "version; nothing was started\n",
          );
          return 1;
        },
      },
      waitCommand,
      ...iptablesCommands(environment),
      requestCommand("http://127.0.0.1:15000", "Makes an HTTP request to the proxy admin API"),
      versionCommand,
    ],
  };
}
