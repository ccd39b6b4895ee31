import assert from "node:assert/strict";
import { spawnDeno } from "./programs.ts";

Deno.test("Stopping a program that died leaving a child behind ends the child and returns", async () => {
  // A program that starts a long child sharing its output, and dies without stopping it: a crashed agent and
  // its proxy.
  const program = spawnDeno([
    "eval",
    `new Deno.Command("sh", { args: ["-c", "echo child up; exec sleep 120"], stdout: "inherit" }).spawn();
     await new Promise((resolve) => setTimeout(resolve, 300));
     Deno.exit(3);`,
  ], {});
  await program.waitFor(/child up/);
  const stopped = program.stop();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<"hung">((resolve) => timer = setTimeout(() => resolve("hung"), 30_000));
  try {
    const status = await Promise.race([stopped, hung]);
    // The child ends its hold of the output only by ending: stop() returning says it was ended.
    assert.notEqual(status, "hung", "stop() waited on the child's hold of the output");
  } finally {
    clearTimeout(timer);
  }
});

Deno.test("A program that has exited fails assertRunning with how it ended and its last error lines", async () => {
  const program = spawnDeno(["eval", `console.error("about to fail"); Deno.exit(7);`], {});
  try {
    await program.waitFor(/about to fail/);
    await program.stop();
    assert.throws(
      () => program.assertRunning("the test program"),
      /^Error: the test program exited \(code 7, signal none\); its error output ended:\nabout to fail/,
    );
  } finally {
    await program.stop();
  }
});

Deno.test("A running program passes assertRunning", async () => {
  const program = spawnDeno(
    ["eval", `console.log("up"); await new Promise((r) => setTimeout(r, 60_000));`],
    {},
  );
  try {
    await program.waitFor(/up/);
    program.assertRunning("the test program");
  } finally {
    await program.stop();
  }
});
