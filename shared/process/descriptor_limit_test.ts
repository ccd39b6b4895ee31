import assert from "node:assert/strict";
import { descriptorLimit, raiseDescriptorLimit } from "./descriptor_limit.ts";
import { needs, PRLIMIT } from "../testing/system_tools.ts";

/** A process started under `ulimit -n <soft>`, which sleeps until killed. */
function underLowLimit(soft: number): Deno.ChildProcess {
  return new Deno.Command("sh", {
    args: ["-c", `ulimit -S -n ${soft} && exec sleep 600`],
    stdout: "null",
    stderr: "null",
  }).spawn();
}

Deno.test(
  "raiseDescriptorLimit lifts a process's soft descriptor limit to its hard limit",
  needs(PRLIMIT),
  async () => {
    const child = underLowLimit(64);
    try {
      // The shell applies the limit before it becomes `sleep`: wait until it has.
      let before = await descriptorLimit(child.pid);
      for (let tries = 0; before.soft !== 64 && tries < 100; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        before = await descriptorLimit(child.pid);
      }
      assert.equal(before.soft, 64);
      const outcome = await raiseDescriptorLimit(child.pid);
      assert.ok(outcome.raised, JSON.stringify(outcome));
      assert.equal((await descriptorLimit(child.pid)).soft, before.hard);
      assert.deepEqual(await raiseDescriptorLimit(child.pid), { raised: false, limit: outcome.after });
    } finally {
      child.kill("SIGKILL");
      await child.status;
    }
  },
);

Deno.test("raiseDescriptorLimit reports a failure instead of throwing", async () => {
  const outcome = await raiseDescriptorLimit(
    1,
    () => Promise.reject(new Error('Requires run access to "prlimit"')),
  );
  assert.deepEqual(outcome, { raised: false, error: 'Requires run access to "prlimit"' });
});
