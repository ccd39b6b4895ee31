import { runCli } from "@mesh/shared/cli/run_cli";
import { readProcessEnvironment } from "@mesh/shared/env/env_settings";
import { AGENT_INHERITED_FLAGS, agentCli } from "./cli/agent_cli.ts";

if (import.meta.main) {
  const io = {
    stdout: (text: string) => Deno.stdout.writeSync(new TextEncoder().encode(text)),
    stderr: (text: string) => Deno.stderr.writeSync(new TextEncoder().encode(text)),
  };
  let code: number;
  try {
    code = await runCli(agentCli(readProcessEnvironment()), AGENT_INHERITED_FLAGS, Deno.args, io);
  } catch (error) {
    console.error(`Error: ${(error as Error)?.message ?? error}`);
    code = 1;
  }
  Deno.exit(code);
}
