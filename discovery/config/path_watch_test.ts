import assert from "node:assert/strict";
import { join } from "node:path";
import FakeTimers from "@sinonjs/fake-timers";
import { timersOf } from "@mesh/shared/testing/fake_timers";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { FOLDER_STATS_PER_CHECK, PathWatch } from "./path_watch.ts";

/** A directory with `count` empty folders, and a watch over it whose checks run only when the test calls them. */
async function withFolders(
  count: number,
  body: (
    watch: PathWatch,
    folders: string[],
    stats: string[],
    log: RecordingLogger,
    mtimes: Map<string, Date>,
  ) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "path_watch_" });
  const clock = FakeTimers.createClock();
  const folders = Array.from({ length: count }, (_, i) => join(dir, `ns${i}`));
  for (const folder of folders) await Deno.mkdir(folder);
  // Made a minute ago: a change made as the watch is placed may count as after it (a needless move).
  const past = new Date(Date.now() - 60_000);
  for (const path of [dir, ...folders]) await Deno.utime(path, past, past);
  const stats: string[] = [];
  const mtimes = new Map<string, Date>();
  const log = new RecordingLogger();
  const watch = new PathWatch({
    path: dir,
    onChange: () => {},
    folders: () => folders,
    logger: log,
    timers: timersOf(clock),
    stat: async (path) => {
      stats.push(path);
      const info = await Deno.stat(path);
      const mtime = mtimes.get(path);
      return mtime === undefined ? info : { ...info, mtime };
    },
  });
  try {
    await watch.start();
    await body(watch, folders, stats, log, mtimes);
  } finally {
    await watch.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("PathWatch reads a bounded number of folders' times a check, every folder in turn", async () => {
  const count = FOLDER_STATS_PER_CHECK + 8;
  await withFolders(count, async (watch, folders, stats) => {
    const seen = new Set<string>();
    for (let check = 0; check < 2; check++) {
      stats.length = 0;
      await watch.check();
      const read = stats.filter((path) => folders.includes(path));
      assert.equal(read.length, FOLDER_STATS_PER_CHECK, "one check reads at most its share of the folders");
      for (const path of read) seen.add(path);
    }
    assert.equal(seen.size, count, "two checks together read every folder");
  });
});

Deno.test("PathWatch still finds a folder changed without an event when the folder's turn comes late", async () => {
  await withFolders(2 * FOLDER_STATS_PER_CHECK, async (watch, folders, stats, log, mtimes) => {
    // The last folder's entries change after the watch was placed, and its watch reports nothing (stalled).
    const last = folders.at(-1)!;
    mtimes.set(last, new Date(Date.now() + 1000));
    const stalls = () => log.matching("warn", "delivered no event").length;
    await watch.check();
    assert.ok(!stats.includes(last), "the first check's turn does not reach the last folder");
    assert.equal(stalls(), 0);
    stats.length = 0;
    await watch.check();
    assert.ok(stats.includes(last), "the second check's turn reads it: its change is unreported, once");
    assert.equal(stalls(), 0, "one check without an event is not a stall");
    stats.length = 0;
    await watch.check();
    assert.ok(!stats.includes(last), "the third check goes by what the last turn read");
    assert.equal(stalls(), 1, "still unreported: the watch is placed again");
    assert.equal(watch.state, "watching");
  });
});
