import assert from "node:assert/strict";
import { IsolatedFsWatcher } from "./isolated_fs_watcher.ts";
import { waitFor } from "./_test_support.ts";

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
