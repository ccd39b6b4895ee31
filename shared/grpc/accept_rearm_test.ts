import "reflect-metadata";
import assert from "node:assert/strict";
import { EchoTestClient } from "./_test_echo_service.ts";
import { waitFor } from "../testing/wait_for.ts";

const HELLO = new TextEncoder().encode("hello");
const ROOT = new URL("../../", import.meta.url).pathname;
const SERVER = new URL("./_echo_server_process.ts", import.meta.url).pathname;
/** Descriptors the server process may open: enough to start, far fewer than the connections opened at it. */
const DESCRIPTOR_LIMIT = 64;
const FLOOD = 3 * DESCRIPTOR_LIMIT;

/** The echo server as a process under a descriptor limit of `DESCRIPTOR_LIMIT`, and its port. */
async function startLimitedServer(): Promise<{ child: Deno.ChildProcess; port: number }> {
  const script =
    `ulimit -n ${DESCRIPTOR_LIMIT} && exec "$0" run --allow-net=127.0.0.1 --allow-read --allow-env "$1"`;
  const child = new Deno.Command("sh", {
    args: ["-c", script, Deno.execPath(), SERVER],
    cwd: ROOT,
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await lines.read();
    if (done) throw new Error(`The echo server process exited before listening: ${text}`);
    text += value;
  }
  await lines.cancel();
  return { child, port: JSON.parse(text.split("\n")[0]).port };
}

Deno.test("the gRPC listener accepts again once the descriptors a flood took are free", async () => {
  const { child, port } = await startLimitedServer();
  const flood: Deno.Conn[] = [];
  const client = new EchoTestClient(`127.0.0.1:${port}`);
  try {
    for (let i = 0; i < FLOOD; i++) flood.push(await Deno.connect({ hostname: "127.0.0.1", port }));
    // Each connection the server took is a descriptor; the kernel holds the rest. Once its descriptors ran out,
    // an HTTP/2 client is not served: this call waits (the server cannot accept it) until the flood is gone.
    const answer = client.unary("Echo", HELLO);
    for (const conn of flood.splice(0)) conn.close();
    let outcome: { reply?: Uint8Array; error?: unknown } | undefined;
    answer.then((reply) => outcome = { reply }, (error) => outcome = { error });
    await waitFor(() => outcome !== undefined, "the echo answer after the flood left", 60_000);
    assert.deepEqual(outcome!.reply, HELLO, `the call failed: ${outcome!.error}`);
  } finally {
    for (const conn of flood) conn.close();
    client.close();
    child.kill("SIGKILL");
    await child.status;
  }
});
