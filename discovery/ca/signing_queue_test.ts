import assert from "node:assert/strict";
import { SigningQueue, SigningQueueFullError } from "./signing_queue.ts";

/** A job that runs until `finish` is called, recording when it started. */
function heldJob(started: string[], name: string) {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => finish = resolve);
  return { job: () => (started.push(name), done.then(() => name)), finish: () => finish() };
}

Deno.test("SigningQueue runs at most its concurrency, queues in order and refuses past the queue's size", async () => {
  const queue = new SigningQueue({ concurrency: 2, queueSize: 1 });
  const started: string[] = [];
  const jobs = ["a", "b", "c"].map((name) => heldJob(started, name));
  const runs = jobs.map(({ job }) => queue.run(job));
  await Promise.resolve();
  assert.deepEqual(started, ["a", "b"]);
  assert.deepEqual(queue.stats, { running: 2, waiting: 1 });
  await assert.rejects(() => queue.run(() => Promise.resolve("d")), SigningQueueFullError);
  assert.deepEqual(started, ["a", "b"], "a refused job never starts");
  jobs[1].finish();
  assert.equal(await runs[1], "b");
  assert.deepEqual(started, ["a", "b", "c"]);
  jobs[0].finish();
  jobs[2].finish();
  assert.deepEqual(await Promise.all(runs), ["a", "b", "c"]);
  assert.deepEqual(queue.stats, { running: 0, waiting: 0 });
});

Deno.test("SigningQueue drops a waiting request whose call ended", async () => {
  const queue = new SigningQueue({ concurrency: 1, queueSize: 5 });
  const started: string[] = [];
  const first = heldJob(started, "first");
  const running = queue.run(first.job);
  const ended = new AbortController();
  const waiting = queue.run(() => Promise.resolve("never"), ended.signal);
  assert.deepEqual(queue.stats, { running: 1, waiting: 1 });
  ended.abort(new Error("call cancelled"));
  await assert.rejects(waiting, /call cancelled/);
  assert.deepEqual(queue.stats, { running: 1, waiting: 0 });
  first.finish();
  await running;
  assert.deepEqual(queue.stats, { running: 0, waiting: 0 });
});

Deno.test("SigningQueue refuses bounds that would disable it", () => {
  assert.throws(() => new SigningQueue({ concurrency: 0, queueSize: 1 }), RangeError);
  assert.throws(() => new SigningQueue({ concurrency: 1, queueSize: -1 }), RangeError);
});
