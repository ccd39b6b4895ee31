import type { CommandContext, CommandSpec } from "@mesh/shared/cli/command_spec";
import { logFlagsFrom } from "@mesh/shared/cli/logging_flags";
import { EnvSettings } from "@mesh/shared/env/env_settings";
import { formatDuration } from "@mesh/shared/flags/duration";
import { LogManager } from "@mesh/shared/log/log_manager";
import {
  applyIptables,
  CaptureValidationError,
  cleanIptables,
  CommandFailedError,
  CommandNotFoundError,
  denoCommandExecutor,
  iptablesConfigFromFlags,
  type IptablesEnv,
  type IptablesFlags,
} from "../iptables/mod.ts";
import { AGENT_SCOPES, CLEAN_IPTABLES_FLAGS, IPTABLES_FLAGS } from "./flags.ts";

const ENV_NAMES: readonly (keyof IptablesEnv)[] = [
  "PROXY_PORT",
  "INBOUND_CAPTURE_PORT",
  "INBOUND_TUNNEL_PORT",
  "IPTABLES_PROBE_PORT",
  "PROXY_USER",
  "PROXY_UID",
  "PROXY_GID",
  "MESH_INBOUND_INTERCEPTION_MODE",
  "MESH_INBOUND_PORTS",
  "MESH_INBOUND_TPROXY_MARK",
  "MESH_INBOUND_TPROXY_ROUTE_TABLE",
  "MESH_LOCAL_EXCLUDE_PORTS",
  "MESH_LOCAL_OUTBOUND_PORTS_EXCLUDE",
  "MESH_OUTBOUND_PORTS",
  "MESH_SERVICE_CIDR",
  "MESH_SERVICE_EXCLUDE_CIDR",
  "ORCH_VIRT_INTERFACES",
  "PROBE_TIMEOUT",
];

/** The capture settings the environment supplies, read through the env registry. */
function iptablesEnv(env: EnvSettings): IptablesEnv {
  const out: IptablesEnv = { MESH_META_DNS_CAPTURE: env.bool("MESH_META_DNS_CAPTURE") };
  for (const name of ENV_NAMES) (out as Record<string, unknown>)[name] = env.string(name);
  return out;
}

/** The command-line flags in the library's raw form; the duration flag goes back to its Go text. */
function rawFlags(ctx: CommandContext, explicitOnly: boolean): IptablesFlags {
  const out: Record<string, string | boolean> = {};
  for (const [name, value] of Object.entries(ctx.flags)) {
    if (name.startsWith("log_")) continue;
    if (
      explicitOnly && typeof value === "string" && !ctx.explicit.has(name) && name !== "iptables-probe-port"
    ) continue;
    out[name] = typeof value === "bigint" ? formatDuration(value) : value as string | boolean;
  }
  return out as IptablesFlags;
}

/** The pod's own addresses, so a pod with IPv6 gets IPv6 rules too. */
function podIps(): string[] {
  try {
    return Deno.networkInterfaces().filter((i) => i.name !== "lo").map((i) => i.address);
  } catch {
    return [];
  }
}

async function runCapture(
  ctx: CommandContext,
  environment: Readonly<Record<string, string>>,
  clean: boolean,
) {
  const env = new EnvSettings("agent", environment);
  const logs = new LogManager(AGENT_SCOPES, logFlagsFrom(ctx.flags));
  const log = logs.scope("default");
  try {
    const config = iptablesConfigFromFlags(rawFlags(ctx, true), iptablesEnv(env), { podIps: podIps() });
    const deps = {
      exec: denoCommandExecutor(),
      logger: log,
      print: ctx.io.stdout,
      identity: config.runValidation ? { uid: Deno.uid() ?? 0, gid: Deno.gid() ?? 0 } : undefined,
    };
    if (clean) await cleanIptables(config, deps);
    else await applyIptables(config, deps);
    return 0;
  } catch (error) {
    const known = error instanceof RangeError || error instanceof TypeError ||
      error instanceof CommandNotFoundError ||
      error instanceof CommandFailedError || error instanceof CaptureValidationError;
    if (!known) throw error;
    ctx.io.stderr(`Error: ${error.message}\n`);
    return 1;
  } finally {
    logs.close();
  }
}

/** `mesh-agent mesh-iptables` and `mesh-agent mesh-clean-iptables`. */
export function iptablesCommands(environment: Readonly<Record<string, string>>): CommandSpec[] {
  return [
    {
      name: "mesh-iptables",
      summary: "Set up iptables rules for the sidecar's traffic capture",
      flags: IPTABLES_FLAGS,
      run: (ctx) => runCapture(ctx, environment, false),
    },
    {
      name: "mesh-clean-iptables",
      summary: "Clean up iptables rules for the sidecar's traffic capture",
      flags: CLEAN_IPTABLES_FLAGS,
      run: (ctx) => runCapture(ctx, environment, true),
    },
  ];
}
