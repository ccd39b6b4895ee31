import assert from "node:assert/strict";
import { IsolatedFsWatcher } from "./isolated_fs_watcher.ts";
import { waitFor } from "./_test_support.ts";
import { LoopSlices } from "@mesh/shared/time/loop_slices";

async function mkfifo(path: string): Promise<void> {
  const { code } = await new Deno.Command("sh", { args: ["-c", 'mkfifo "$1"', "sh", path] }).output();
  assert.equal(code, 0);
}

Deno.test("IsolatedFsWatcher reports events, and closes at once even when its watcher is stalled on a FIFO", async () => {
  const dir = await Deno.makeTempDir({ prefix: "isolated_fs_watcher_" });
  const watcher = await IsolatedFsWatcher.open(dir, true);
  const seen: string[] = [];
  const loop = (async () => {
    for await (const event of watcher) seen.push(...event.paths);
  })();
  try {
    await Deno.writeTextFile(`${dir}/a.yaml`, "a");
    await waitFor(() => seen.includes(`${dir}/a.yaml`), "the event of a new file");
    // The runtime's watcher opens the FIFO it reports on and waits for a writer: closing it in this thread
    // would block the thread for good.
    await mkfifo(`${dir}/x.yaml`);
    await Deno.remove(`${dir}/x.yaml`);
  } finally {
    watcher.close();
    await loop;
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("IsolatedFsWatcher refuses a path that is not there", async () => {
  await assert.rejects(IsolatedFsWatcher.open("/tmp/isolated_fs_watcher_missing_folder", true), Error);
});

Deno.test("IsolatedFsWatcher hands out queued events in slices of the event loop", async () => {
  const dir = await Deno.makeTempDir({ prefix: "isolated_fs_watcher_" });
  let pauses = 0;
  /** Slices whose every pause is counted. */
  class CountedSlices extends LoopSlices {
    override pause(): Promise<void> {
      pauses++;
      return super.pause();
    }
  }
  const watcher = await IsolatedFsWatcher.open(dir, true, () => new CountedSlices());
  let events = 0;
  const seen = new Set<string>();
  const loop = (async () => {
    for await (const event of watcher) {
      events++;
      for (const path of event.paths) seen.add(path);
    }
  })();
  try {
    for (let i = 0; i < 20; i++) await Deno.writeTextFile(`${dir}/f${i}.yaml`, "a");
    await waitFor(() => seen.has(`${dir}/f19.yaml`), "the events of 20 new files");
    assert.ok(events >= 20);
    assert.equal(pauses, events);
  } finally {
    watcher.close();
    await loop;
    await Deno.remove(dir, { recursive: true });
  }
});
