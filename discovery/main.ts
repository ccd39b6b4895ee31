import "@mesh/shared/cli/quiet_dependency_warnings";

/**
 * Listens for signals from the first moment, startup included, and returns what resolves on the first SIGINT
 * or SIGTERM with the signal's name. SIGHUP is ignored with a line on stderr: every config file is watched, so
 * there is nothing to reload, and a closing terminal must not stop the server. SIGINT or SIGTERM before the
 * server waits for them (during startup, or in a command that never does) ends the process at once, as their
 * default action would.
 */
function listenForSignals(): () => Promise<string> {
  Deno.addSignalListener("SIGHUP", () => {
    console.error("SIGHUP received and ignored: config files are watched and reloaded on change");
  });
  let waiting = false;
  const stopped = new Promise<string>((resolve) => {
    for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
      Deno.addSignalListener(signal, () => {
        if (waiting) return resolve(signal);
        console.error(`${signal} received before the server started: exiting`);
        Deno.exit(code);
      });
    }
  });
  return () => {
    waiting = true;
    return stopped;
  };
}

if (import.meta.main) {
  const io = {
    stdout: (text: string) => Deno.stdout.writeSync(new TextEncoder().encode(text)),
    stderr: (text: string) => Deno.stderr.writeSync(new TextEncoder().encode(text)),
  };
  // Signals are handled before the program's modules load (some take a second to evaluate).
  const untilSignal = listenForSignals();
  const { runCli } = await import("@mesh/shared/cli/run_cli");
  const { readProcessEnvironment } = await import("@mesh/shared/env/env_settings");
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
