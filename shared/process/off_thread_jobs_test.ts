import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { timersOf } from "../testing/fake_timers.ts";
import { waitFor } from "../testing/wait_for.ts";
import {
  type JobAnswer,
  JobExpiredError,
  type JobMessage,
  type JobWorker,
  OffThreadJobs,
} from "./off_thread_jobs.ts";

/** Workers that answer when the test says: each posted job is recorded, and `answer` replies to the oldest. */
class FakeWorkers {
  readonly started: FakeWorker[] = [];
  spawn = (): JobWorker => {
    const worker = new FakeWorker();
    this.started.push(worker);
    return worker;
  };
  get last(): FakeWorker {
    return this.started.at(-1)!;
  }
}

class FakeWorker implements JobWorker {
  onmessage: ((event: MessageEvent) => void) | null = null;
  onerror: ((event: ErrorEvent) => void) | null = null;
  readonly posted: JobMessage<string>[] = [];
  terminated = false;
  postMessage(message: unknown): void {
    const posted = message as JobMessage<string>;
    // As serveJobs does: the job runs at once, and says so until the test finishes or answers it.
    if (posted.busy !== undefined) Atomics.store(new Int32Array(posted.busy), 0, 1);
    this.posted.push(posted);
  }
  terminate(): void {
    this.terminated = true;
  }
  answer(result: (job: string) => JobAnswer<string>): void {
    const message = this.posted.shift()!;
    this.onmessage!(new MessageEvent("message", { data: { ...result(message.job), id: message.id } }));
  }
  crash(message: string): void {
    this.onerror!(new ErrorEvent("error", { message, cancelable: true }));
  }
}

const done = (job: string): JobAnswer<string> => ({ id: 0, ok: true, result: `done ${job}` });

function setup(options: { idleMs?: number; maxRunMs?: number } = {}) {
  const clock = FakeTimers.createClock();
  const workers = new FakeWorkers();
  const jobs = new OffThreadJobs<string, string>({
    worker: new URL("file:///unused.ts"),
    timers: timersOf(clock),
    spawn: workers.spawn,
    ...options,
  });
  return { clock, workers, jobs };
}

Deno.test("OffThreadJobs runs one job at a time, the waiting keys in turn", async () => {
  const { workers, jobs } = setup();
  const order: string[] = [];
  const results = [
    jobs.run("10.0.0.1", "a1", 10_000),
    jobs.run("10.0.0.1", "a2", 10_000),
    jobs.run("10.0.0.1", "a3", 10_000),
    jobs.run("10.0.0.2", "b1", 10_000),
    jobs.run("10.0.0.2", "b2", 10_000),
  ];
  assert.equal(workers.started.length, 1);
  while (workers.last.posted.length > 0) {
    assert.equal(workers.last.posted.length, 1, "one job at a time");
    order.push(workers.last.posted[0].job);
    workers.last.answer(done);
  }
  assert.deepEqual(order, ["a1", "b1", "a2", "b2", "a3"]);
  assert.deepEqual(await Promise.all(results), ["done a1", "done a2", "done a3", "done b1", "done b2"]);
  assert.equal(workers.started.length, 1, "one worker for them all");
  jobs.close();
});

Deno.test("OffThreadJobs refuses a job whose turn comes past its wait, without running it", async () => {
  const { clock, workers, jobs } = setup();
  const first = jobs.run("10.0.0.1", "slow", 10_000);
  const late = jobs.run("10.0.0.2", "late", 10_000);
  const onTime = jobs.run("10.0.0.3", "on time", 20_000);
  clock.tick(15_000);
  workers.last.answer(done);
  assert.equal(await first, "done slow");
  await assert.rejects(late, (error) => {
    assert.ok(error instanceof JobExpiredError);
    assert.equal(error.message, "the job waited past its deadline by 5000 ms");
    return true;
  });
  assert.deepEqual(workers.last.posted.map((m) => m.job), ["on time"]);
  workers.last.answer(done);
  assert.equal(await onTime, "done on time");
  jobs.close();
});

Deno.test("OffThreadJobs fails a job that threw, ran too long or lost its worker, and goes on with a new worker", async () => {
  const { clock, workers, jobs } = setup({ maxRunMs: 10_000 });
  const threw = jobs.run("a", "throws", 1_000);
  const crashed = jobs.run("a", "crashes", 1_000);
  const overran = jobs.run("a", "overruns", 1_000);
  const after = jobs.run("a", "after", 60_000);
  workers.last.answer(() => ({ id: 0, ok: false, error: "RangeError: bad input" }));
  await assert.rejects(threw, { message: "RangeError: bad input" });
  assert.equal(workers.started.length, 1, "a job that threw leaves its worker running");
  workers.last.crash("Uncaught out of memory");
  await assert.rejects(crashed, { message: "The worker failed: Uncaught out of memory" });
  assert.ok(workers.started[0].terminated);
  assert.equal(workers.started.length, 2);
  clock.tick(10_000);
  await assert.rejects(overran, { message: "The job ran longer than 10000 ms; its worker was ended" });
  assert.ok(workers.started[1].terminated);
  assert.equal(workers.started.length, 3);
  workers.last.answer(done);
  assert.equal(await after, "done after");
  jobs.close();
});

/** Marks the job a fake worker was posted as finished, as `serveJobs` does once its handler returns. */
const finish = (worker: FakeWorker, index = 0) =>
  Atomics.store(new Int32Array(worker.posted[index].busy!), 0, 0);

Deno.test("Workers ended while their jobs still run count until the jobs finish: past two, no new worker starts", async () => {
  const { clock, workers, jobs } = setup({ maxRunMs: 10_000 });
  for (const slow of ["slow 1", "slow 2"]) {
    const overran = assert.rejects(jobs.run("a", slow, 60_000), { message: /ran longer than 10000 ms/ });
    clock.tick(10_000);
    await overran;
  }
  // Both ended workers still run their jobs (terminate() does not stop a running job on Deno 2.9.3).
  const late = assert.rejects(jobs.run("b", "late", 500), JobExpiredError);
  const patient = jobs.run("c", "patient", 60_000);
  clock.tick(1_000);
  await late;
  assert.equal(workers.started.length, 2, "no third thread beside two that still run");
  finish(workers.started[0]);
  clock.tick(100);
  assert.equal(workers.started.length, 3, "a new worker once one of the jobs has finished");
  assert.deepEqual(workers.last.posted.map((m) => m.job), ["patient"]);
  workers.last.answer(done);
  assert.equal(await patient, "done patient");
  jobs.close();
});

Deno.test("An ended worker whose job never says it finished stops counting after ten minutes", async () => {
  const { clock, workers, jobs } = setup({ maxRunMs: 10_000 });
  for (const stuck of ["stuck 1", "stuck 2"]) {
    const overran = assert.rejects(jobs.run("a", stuck, 60_000));
    clock.tick(10_000);
    await overran;
  }
  // The first was ended at 10 s: it stops counting at 610 s.
  const next = jobs.run("a", "next", 20 * 60_000);
  clock.tick(589_000);
  assert.equal(workers.started.length, 2);
  clock.tick(2_000);
  assert.equal(workers.started.length, 3);
  workers.last.answer(done);
  assert.equal(await next, "done next");
  jobs.close();
});

Deno.test("A job kept running by its ended worker lets the pool go on once it returns, with real threads", async () => {
  // The latch worker blocks in Atomics.wait until released; terminate() does not interrupt it on Deno 2.9.3.
  // The limit is a fake clock's, moved once each job has started: a worker ended while its module still loads
  // (with a cold cache, for seconds) never runs its job at all.
  const clock = FakeTimers.createClock();
  const jobs = new OffThreadJobs<{ cells: SharedArrayBuffer; slot: number }, string>({
    worker: new URL("./testdata/latch_worker.ts", import.meta.url),
    maxRunMs: 10_000,
    timers: timersOf(clock),
  });
  const cells = new SharedArrayBuffer(12);
  const view = new Int32Array(cells);
  const started = (slot: number) => Atomics.load(view, slot) === 1;
  const release = (slot: number) => {
    Atomics.store(view, slot, 2);
    Atomics.notify(view, slot);
  };
  try {
    for (const slot of [0, 1]) {
      const ended = assert.rejects(jobs.run("a", { cells, slot }, 60_000), {
        message: /ran longer than 10000 ms/,
      });
      await waitFor(() => started(slot), `job ${slot} to start`, 120_000);
      clock.tick(10_000);
      await ended;
    }
    const third = jobs.run("b", { cells, slot: 2 }, 60_000);
    third.catch(() => {}); // Awaited below; a failure before then must not also surface as unhandled.
    clock.tick(100);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(Atomics.load(view, 2), 0, "the third job waits while both ended jobs still run");
    release(0);
    await waitFor(
      () => {
        clock.tick(100);
        return started(2);
      },
      "the third job to start in a new worker once one ended job returned",
      120_000,
    );
    release(2);
    assert.equal(await third, "released");
  } finally {
    release(1);
    jobs.close();
  }
});

Deno.test("OffThreadJobs ends its worker after a quiet spell and starts one for the next job", async () => {
  const { clock, workers, jobs } = setup({ idleMs: 30_000 });
  assert.equal(jobs.started, false, "no worker before the first job");
  const first = jobs.run("a", "one", 1_000);
  workers.last.answer(done);
  await first;
  clock.tick(29_999);
  assert.equal(jobs.started, true);
  clock.tick(1);
  assert.equal(jobs.started, false);
  assert.ok(workers.started[0].terminated);
  const second = jobs.run("a", "two", 1_000);
  assert.equal(workers.started.length, 2);
  workers.last.answer(done);
  assert.equal(await second, "done two");
  jobs.close();
});

Deno.test("OffThreadJobs.close refuses the waiting and running jobs and ends the worker", async () => {
  const { workers, jobs } = setup();
  const running = jobs.run("a", "running", 1_000);
  const waiting = jobs.run("b", "waiting", 1_000);
  jobs.close();
  await assert.rejects(running, { message: "OffThreadJobs closed before the job ran" });
  await assert.rejects(waiting, { message: "OffThreadJobs closed before the job ran" });
  assert.ok(workers.last.terminated);
  await assert.rejects(jobs.run("a", "after", 1_000), {
    message: "OffThreadJobs is closed: no job is accepted",
  });
});

Deno.test("A job runs in a worker thread while the event loop goes on", async () => {
  const jobs = new OffThreadJobs<{ cells: SharedArrayBuffer; slot: number; fail?: boolean }, string>({
    worker: new URL("./testdata/latch_worker.ts", import.meta.url),
  });
  try {
    const cells = new SharedArrayBuffer(8);
    const view = new Int32Array(cells);
    const result = jobs.run("a", { cells, slot: 0 }, 10_000);
    // The job blocks its thread until this thread, running meanwhile, releases it.
    await waitFor(() => Atomics.load(view, 0) === 1, "the worker to start the job");
    Atomics.store(view, 0, 2);
    Atomics.notify(view, 0);
    assert.equal(await result, "released");
    await assert.rejects(jobs.run("a", { cells, slot: 1, fail: true }, 10_000), {
      message: "job 1 was told to fail",
    });
  } finally {
    jobs.close();
  }
});
