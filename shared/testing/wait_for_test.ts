import assert from "node:assert/strict";
import { waitFor } from "./wait_for.ts";

Deno.test("waitFor resolves once a condition, plain or async, holds", async () => {
  let calls = 0;
  await waitFor(() => ++calls >= 3, "the third call", 5_000, 1);
  assert.equal(calls, 3);
  let asyncCalls = 0;
  await waitFor(() => Promise.resolve(++asyncCalls >= 2), "the second call", 5_000, 1);
  assert.equal(asyncCalls, 2);
});

Deno.test("waitFor fails after its timeout, naming what it waited for", async () => {
  await assert.rejects(
    waitFor(() => false, "the impossible", 30, 5),
    (error: unknown) =>
      error instanceof Error && error.message === "Timed out after 30 ms waiting for the impossible",
  );
});
