import assert from "node:assert/strict";
import { waitFor } from "../shared/testing/wait_for.ts";
import { TurnScheduler, TurnWriter } from "./h2_turn_writer.ts";

/** A sink whose writes complete only when the test says so. */
class HeldSink {
  readonly writes: number[][] = [];
  #release: (() => void)[] = [];

  write(bytes: Uint8Array): Promise<number> {
    this.writes.push([...bytes]);
    return new Promise((resolve) => this.#release.push(() => resolve(bytes.length)));
  }

  releaseOne(): void {
    this.#release.shift()?.();
  }
}

Deno.test("frames queued in one turn leave in one write, and none starts while one is pending", async () => {
  const sink = new HeldSink();
  const scheduler = new TurnScheduler();
  const writer = new TurnWriter(sink, scheduler, (e) => assert.fail(String(e)));
  writer.enqueue(new Uint8Array([1]));
  writer.enqueue(new Uint8Array([2, 3]));
  await waitFor(() => sink.writes.length === 1, "the first write");
  writer.enqueue(new Uint8Array([4]));
  writer.enqueue(new Uint8Array([5]));
  // A probe flush scheduled after them: a flush the writer had scheduled for 4 and 5 runs before it.
  await new Promise<void>((resolve) => scheduler.schedule(resolve));
  assert.deepEqual(sink.writes, [[1, 2, 3]]);
  assert.equal(writer.queuedBytes, 2);
  sink.releaseOne();
  await waitFor(() => sink.writes.length === 2, "the second write");
  assert.deepEqual(sink.writes, [[1, 2, 3], [4, 5]]);
  sink.releaseOne();
  await writer.idle();
  assert.equal(writer.writes, 2);
});
