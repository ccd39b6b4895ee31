/**
 * Test support: the real `mesh-agent proxy` in a directory of its own (it writes `./etc/mesh/proxy` there),
 * started with a clean environment and permission to run the stand-in proxy (`stand_in_proxy.ts`) as its Envoy.
 *
 * @module
 */
import { programArgsAnywhere, type RunningProgram, spawnDeno } from "./programs.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** Writes the stand-in proxy's launcher into `dir`; returns its path, the agent's `binaryPath`. */
export async function writeStandInLauncher(dir: string): Promise<string> {
  const standIn = `${dir}/stand-in-proxy`;
  await Deno.writeTextFile(
    standIn,
    `#!/bin/sh\nexec deno run --config ${ROOT}deno.json --allow-net --allow-read --allow-write --allow-env --allow-sys ${ROOT}tests/helpers/stand_in_proxy.ts "$@"\n`,
  );
  await Deno.chmod(standIn, 0o755);
  return standIn;
}

/** Starts `mesh-agent proxy <role>` in `dir` with only `env` (plus PATH, HOME and DENO_DIR) set. */
export function startAgentProgram(
  dir: string,
  role: "sidecar" | "router",
  standIn: string,
  env: Record<string, string>,
): RunningProgram {
  return startAgentCommand(dir, ["proxy", role], standIn, env);
}

/** Starts `mesh-agent <args>` in `dir` as {@link startAgentProgram} does (a container's command, say). */
export function startAgentCommand(
  dir: string,
  command: readonly string[],
  standIn: string,
  env: Record<string, string>,
): RunningProgram {
  const args = programArgsAnywhere("mesh-agent").map((a) =>
    a.startsWith("--allow-run=") ? `${a},${standIn}` : a
  );
  return spawnDeno([...args, ...command], env, dir);
}
