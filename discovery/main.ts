import "../shared/cli/quiet_dependency_warnings.ts";
import { runCli } from "../shared/cli/run_cli.ts";
import { readProcessEnvironment } from "../shared/env/env_settings.ts";
import { DISCOVERY_INHERITED_FLAGS, discoveryCli } from "./cli/discovery_cli.ts";

/**
 * Resolves on the first SIGINT or SIGTERM with the signal's name. SIGHUP is ignored with a line on stderr:
 * every config file is watched, so there is nothing to reload, and a closing terminal must not stop the server.
 */
function untilSignal(): Promise<string> {
  Deno.addSignalListener("SIGHUP", () => {
    console.error("SIGHUP received and ignored: config files are watched and reloaded on change");
  });
  return new Promise((resolve) => {
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      Deno.addSignalListener(signal, () => resolve(signal));
    }
  });
}

if (import.meta.main) {
  const io = {
    stdout: (text: string) => Deno.stdout.writeSync(new TextEncoder().encode(text)),
    stderr: (text: string) => Deno.stderr.writeSync(new TextEncoder().encode(text)),
  };
  let code: number;
  try {
    code = await runCli(
      discoveryCli(readProcessEnvironment(), untilSignal),
      DISCOVERY_INHERITED_FLAGS,
      Deno.args,
      io,
    );
  } catch (error) {
    console.error(`Error: ${(error as Error)?.message ?? error}`);
    code = 1;
  }
  Deno.exit(code);
}
