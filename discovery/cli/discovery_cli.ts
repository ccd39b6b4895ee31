import { type CommandSpec, UsageError } from "@mesh/shared/cli/command_spec";
import { logFlagsFrom, loggingFlagsFor } from "@mesh/shared/cli/logging_flags";
import { requestCommand } from "@mesh/shared/cli/request_command";
import { versionCommand } from "@mesh/shared/cli/version_command";
import type { FlagSpec } from "@mesh/shared/cli/flag_spec";
import { EnvSettings } from "@mesh/shared/env/env_settings";
import { warnIneffectiveSettings } from "@mesh/shared/env/ineffective_settings";
import { LogManager } from "@mesh/shared/log/log_manager";
import { raiseOwnDescriptorLimit } from "@mesh/shared/process/descriptor_limit";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { buildInfo } from "@mesh/shared/version/build_info";
import { startDiscovery } from "../server.ts";
import { discoveryOptions } from "./discovery_options.ts";
import { DISCOVERY_COMMON_FLAGS, DISCOVERY_FLAGS, DISCOVERY_SCOPES } from "./flags.ts";

/** Flags every `mesh-discovery` command accepts: logging plus introspection and keepalive. */
export const DISCOVERY_INHERITED_FLAGS: readonly FlagSpec[] = [
  ...loggingFlagsFor(DISCOVERY_SCOPES),
  ...DISCOVERY_COMMON_FLAGS,
];

/** How the `discovery` command waits for the end of its life (a signal in main, a promise in tests). */
export type StopSignal = () => Promise<string>;

/** The `mesh-discovery` command tree, reading `environment` through the env registry. */
export function discoveryCli(environment: Readonly<Record<string, string>>, stop: StopSignal): CommandSpec {
  return {
    name: "mesh-discovery",
    summary: "Mesh Discovery",
    description: "Mesh Discovery provides fleet-wide traffic management capabilities in the service mesh.",
    subcommands: [
      {
        name: "discovery",
        summary: "Start mesh proxy discovery service",
        flags: DISCOVERY_FLAGS,
        async run(ctx) {
          const startedAt = performance.now();
          const env = new EnvSettings("discovery", environment);
          const options = discoveryOptions(ctx.flags, ctx.explicit, env);
          const logs = new LogManager(DISCOVERY_SCOPES, logFlagsFrom(ctx.flags));
          warnIneffectiveSettings(logs.scope("default"), env, "discovery", ctx.explicit);
          if (options.configDir === "" && !options.registries.includes("Orchestrator")) {
            throw new UsageError(
              "--configDir is required without the Orchestrator registry: with --registries Mock alone, files are " +
                "the only config source",
              ctx.path,
            );
          }
          const info = buildInfo();
          const metrics = new Metrics("discovery", { version: info.version, tag: info.tag });
          // Every connection is a descriptor: the soft limit (often 1024) goes up to the hard one before serving.
          await raiseOwnDescriptorLimit(logs.scope("default"));
          const server = await startDiscovery(options, { logs, metrics, info, startedAt, argv: ctx.argv });
          const reason = await stop();
          logs.scope("default").info("shutting down", { reason });
          await server.close();
          logs.close();
          return 0;
        },
      },
      requestCommand(
        "http://127.0.0.1:15014",
        "Makes an HTTP request to the discovery metrics/debug endpoint",
      ),
      versionCommand,
    ],
  };
}
