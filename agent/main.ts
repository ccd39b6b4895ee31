import http2 from "node:http2";
import { runCli } from "@mesh/shared/cli/run_cli";
import { bypassGoawayOnConnect } from "@mesh/shared/grpc/goaway_bypass";
import { readProcessEnvironment } from "@mesh/shared/env/env_settings";
import { AGENT_INHERITED_FLAGS, agentCli } from "./cli/agent_cli.ts";

if (import.meta.main) {
  const io = {
    stdout: (text: string) => Deno.stdout.writeSync(new TextEncoder().encode(text)),
    stderr: (text: string) => Deno.stderr.writeSync(new TextEncoder().encode(text)),
  };
  // The agent's gRPC clients (its upstream xDS and CA connections) read the discovery server's GOAWAY: on the
  // Deno releases that abort in nghttp2 on one, a restart of the server would stop the agent (docs/deno_pin.md).
  bypassGoawayOnConnect(http2);
  let code: number;
  try {
    code = await runCli(agentCli(readProcessEnvironment()), AGENT_INHERITED_FLAGS, Deno.args, io);
  } catch (error) {
    console.error(`Error: ${(error as Error)?.message ?? error}`);
    code = 1;
  }
  Deno.exit(code);
}
