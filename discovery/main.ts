import "../shared/cli/quiet_dependency_warnings.ts";

/**
 * Listens for signals from the first moment, startup included, and returns what resolves on the first SIGINT
 * or SIGTERM with the signal's name. SIGHUP is ignored with a line on stderr: every config file is watched, so
 * there is nothing to reload, and a closing terminal must not stop the server.
 */
function listenForSignals(): () => Promise<string> {
  Deno.addSignalListener("SIGHUP", () => {
    console.error("SIGHUP received and ignored: config files are watched and reloaded on change");
  });
  const stopped = new Promise<string>((resolve) => {
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      Deno.addSignalListener(signal, () => resolve(signal));
    }
  });
  return () => stopped;
}

if (import.meta.main) {
  const io = {
    stdout: (text: string) => Deno.stdout.writeSync(new TextEncoder().encode(text)),
    stderr: (text: string) => Deno.stderr.writeSync(new TextEncoder().encode(text)),
  };
  // Signals are handled before the program's modules load (some take a second to evaluate).
  const untilSignal = listenForSignals();
  const { runCli } = await import("../shared/cli/run_cli.ts");
  const { readProcessEnvironment } = await import("../shared/env/env_settings.ts");
  const { DISCOVERY_INHERITED_FLAGS, discoveryCli } = await import("./cli/discovery_cli.ts");
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
