/**
 * A proxyless gRPC client in its own process (gRPC's xDS bootstrap comes from the environment of the process
 * that loads `@grpc/grpc-js-xds`): `deno run xds_client.ts <target>` with `GRPC_XDS_BOOTSTRAP_CONFIG` set.
 *
 * It reads commands from stdin, one per line, and answers each with one JSON line on stdout:
 * - `call <n>`: makes n calls of `/mesh.test.Echo/Who` one after another on the same channel and answers
 *   `{"counts": {<backend>: <calls>}, "errors": {<status details>: <calls>}}`;
 * - `quit`: closes the channel and exits.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import * as xds from "@grpc/grpc-js-xds";
import { WHO_METHOD, WHO_SERVICE } from "./grpc_backend.ts";

const target = Deno.args[0];
if (target === undefined) {
  throw new TypeError("Missing the target argument: expected xds_client.ts <xds:///target>");
}
xds.register();
const client = new grpc.Client(target, grpc.credentials.createInsecure());
const method = WHO_SERVICE.Who;

function callOnce(): Promise<string> {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      WHO_METHOD,
      method.requestSerialize,
      method.responseDeserialize,
      Buffer.alloc(0),
      { deadline: Date.now() + 2_000 },
      (error, reply) => error ? reject(error) : resolve(Buffer.from(reply!).toString("utf8")),
    );
  });
}

async function calls(n: number): Promise<{ counts: Record<string, number>; errors: Record<string, number> }> {
  const counts: Record<string, number> = {};
  const errors: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    try {
      const name = await callOnce();
      counts[name] = (counts[name] ?? 0) + 1;
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      errors[detail] = (errors[detail] ?? 0) + 1;
    }
  }
  return { counts, errors };
}

const encoder = new TextEncoder();
let buffered = "";
for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
  buffered += chunk;
  let newline: number;
  while ((newline = buffered.indexOf("\n")) >= 0) {
    const line = buffered.slice(0, newline).trim();
    buffered = buffered.slice(newline + 1);
    if (line === "quit") {
      client.close();
      Deno.exit(0);
    }
    const match = /^call (\d+)$/.exec(line);
    const answer = match ? await calls(Number(match[1])) : { error: `Unknown command "${line}"` };
    await Deno.stdout.write(encoder.encode(`${JSON.stringify(answer)}\n`));
  }
}
client.close();
