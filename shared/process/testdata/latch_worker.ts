/**
 * Test worker of `OffThreadJobs`: a job names a slot of shared memory; the worker marks the slot started, then
 * waits (blocking its thread) until the main thread stores 2 there, and answers whether it did within 5 s.
 * Run in line on the main thread, the job could never be released.
 */
import { serveJobs } from "../off_thread_jobs.ts";

serveJobs((job: { readonly cells: SharedArrayBuffer; readonly slot: number; readonly fail?: boolean }) => {
  if (job.fail) throw new RangeError(`job ${job.slot} was told to fail`);
  const cells = new Int32Array(job.cells);
  Atomics.store(cells, job.slot, 1);
  Atomics.notify(cells, job.slot);
  const waited = Atomics.wait(cells, job.slot, 1, 5_000);
  return waited === "timed-out" ? "timed out" : "released";
});
