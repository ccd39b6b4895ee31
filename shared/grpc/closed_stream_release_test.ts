import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

/** Runs the probe (it needs V8's `gc`, so in a process of its own) and returns what it found. */
async function probe(way: "cancel" | "drop"): Promise<{ streams: number; closed: number; alive: number }> {
  const output = await new Deno.Command("deno", {
    args: [
      "run",
      "--v8-flags=--expose-gc",
      "--allow-net=127.0.0.1",
      "--allow-env",
      "--allow-read",
      fileURLToPath(new URL("./_closed_streams_probe.ts", import.meta.url)),
      way,
      "16",
      String(1024 * 1024),
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(output.stdout);
  assert.ok(output.success, `${text}\n${new TextDecoder().decode(output.stderr)}`);
  return JSON.parse(text.trim().split("\n").at(-1)!);
}

Deno.test("A gRPC server lets go of streams the client cancelled while a 1 MiB answer was queued", async () => {
  assert.deepEqual(await probe("cancel"), { streams: 16, closed: 16, alive: 0 });
});

Deno.test("A gRPC server lets go of streams whose connection went away while a 1 MiB answer was queued", async () => {
  assert.deepEqual(await probe("drop"), { streams: 16, closed: 16, alive: 0 });
});
