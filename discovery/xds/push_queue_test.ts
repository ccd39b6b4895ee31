import assert from "node:assert/strict";
import { waitFor } from "@mesh/shared/testing/wait_for";
import { PushQueue } from "./push_queue.ts";

/**
 * A queue whose pushes finish only when the test says so. The queue starts pushes in one synchronous pass, so
 * once what a step must start has started (or a finished push has left the in-flight count), anything else
 * that pass would have started has too: the steps wait for that, never for time.
 */
function controlledQueue(throttle: number, groupOf?: (key: string) => unknown) {
  const started: { key: string; request: string[] }[] = [];
  const finish = new Map<string, () => void>();
  const queue = new PushQueue<string, string[]>({
    throttle,
    ...(groupOf === undefined ? {} : { groupOf }),
    merge: (older, newer) => [...older, ...newer],
    run: (key, request) => {
      started.push({ key, request });
      return new Promise<void>((resolve) => finish.set(key, resolve));
    },
  });
  /** Waits until `count` pushes have started. */
  const startedCount = (count: number) => waitFor(() => started.length >= count, `${count} pushes started`);
  /** Finishes `key`'s push and waits until the queue has taken it back, and started what it then starts. */
  const done = async (key: string) => {
    const resolve = finish.get(key);
    assert.ok(resolve, `${key} is running`);
    finish.delete(key);
    const before = { started: started.length, inFlight: queue.stats().inFlight };
    resolve();
    await waitFor(
      () => started.length > before.started || queue.stats().inFlight < before.inFlight,
      `the queue to take ${key} back`,
    );
  };
  return { queue, started, done, startedCount };
}

Deno.test("PushQueue runs at most `throttle` pushes at once, in arrival order", async () => {
  const { queue, started, done, startedCount } = controlledQueue(2);
  for (const key of ["a", "b", "c", "d"]) queue.enqueue(key, [key]);
  await startedCount(2);
  assert.deepEqual(started.map((s) => s.key), ["a", "b"]);
  assert.deepEqual(queue.stats(), { pending: 2, inFlight: 2 });
  await done("b");
  assert.deepEqual(started.map((s) => s.key), ["a", "b", "c"]);
  await done("a");
  await done("c");
  await done("d");
  assert.deepEqual(queue.stats(), { pending: 0, inFlight: 0 });
});

Deno.test("PushQueue merges requests for a waiting connection and keeps its place", async () => {
  const { queue, started, done, startedCount } = controlledQueue(1);
  queue.enqueue("a", ["a1"]);
  queue.enqueue("b", ["b1"]);
  queue.enqueue("c", ["c1"]);
  await startedCount(1);
  queue.enqueue("c", ["c2"]);
  queue.enqueue("b", ["b2"]);
  await done("a");
  await done("b");
  await done("c");
  assert.deepEqual(started, [
    { key: "a", request: ["a1"] },
    { key: "b", request: ["b1", "b2"] },
    { key: "c", request: ["c1", "c2"] },
  ]);
});

Deno.test("PushQueue holds a request for a running connection and runs it after", async () => {
  const { queue, started, done, startedCount } = controlledQueue(5);
  queue.enqueue("a", ["a1"]);
  await startedCount(1);
  queue.enqueue("a", ["a2"]);
  queue.enqueue("a", ["a3"]);
  // A probe of its own arrives after them: once it has started, a pass of the queue has run since.
  queue.enqueue("probe", ["p"]);
  await startedCount(2);
  assert.deepEqual(started.map((s) => s.key), ["a", "probe"], "one connection never has two pushes at once");
  await done("a");
  assert.deepEqual(started.map((s) => s.request), [["a1"], ["p"], ["a2", "a3"]]);
  await done("a");
});

Deno.test("PushQueue forgets a removed connection and keeps going after a failed push", async () => {
  const errors: string[] = [];
  const ran: string[] = [];
  const goodRan = Promise.withResolvers<void>();
  const queue = new PushQueue<string, string>({
    throttle: 1,
    merge: (_older, newer) => newer,
    run: (key) => {
      ran.push(key);
      if (key === "good") goodRan.resolve();
      return key === "bad" ? Promise.reject(new Error("boom")) : Promise.resolve();
    },
    onError: (key, error) => errors.push(`${key}: ${(error as Error).message}`),
  });
  queue.enqueue("bad", "x");
  queue.enqueue("gone", "x");
  queue.enqueue("good", "x");
  queue.remove("gone");
  // "good" arrived after "gone": once it ran, "gone" would have.
  await goodRan.promise;
  assert.deepEqual(ran, ["bad", "good"]);
  assert.deepEqual(errors, ["bad: boom"]);
});

Deno.test("PushQueue refuses a throttle below 1", () => {
  assert.throws(
    () => new PushQueue({ throttle: 0, merge: (a) => a, run: () => Promise.resolve() }),
    /Invalid push throttle "0": expected at least 1/,
  );
});

Deno.test("PushQueue runs one push of a group at a time and lets other groups' keys pass the rest", async () => {
  // Keys "x1".."x3" share one connection; "h" has its own, and arrives last.
  const { queue, started, done, startedCount } = controlledQueue(2, (key) => key.startsWith("x") ? "x" : key);
  for (const key of ["x1", "x2", "x3", "h"]) queue.enqueue(key, [key]);
  await startedCount(2);
  assert.deepEqual(started.map((s) => s.key), ["x1", "h"]);
  assert.deepEqual(queue.stats(), { pending: 2, inFlight: 2 });
  await done("h");
  assert.deepEqual(started.map((s) => s.key), ["x1", "h"], "x2 waits for x1 though a slot is free");
  await done("x1");
  assert.deepEqual(started.map((s) => s.key), ["x1", "h", "x2"]);
  await done("x2");
  await done("x3");
  assert.deepEqual(queue.stats(), { pending: 0, inFlight: 0 });
});
