import assert from "node:assert/strict";
import { fileStamp, RACY_STAMP_MS, unchangedSince } from "./file_stamp.ts";

/** File info as Deno reports it, times in milliseconds. */
function info(size: number, changedAt: number): Deno.FileInfo {
  return { dev: 1, ino: 2, size, mtime: new Date(changedAt), ctime: new Date(changedAt) } as Deno.FileInfo;
}

Deno.test("A stamp taken within a tick of the file's change cannot vouch for it being unchanged later", () => {
  const changedAt = 1_000_000;
  // A same-size rewrite in the same millisecond reports exactly the same identity, size and times.
  const sameLooking = info(100, changedAt);
  assert.equal(unchangedSince(fileStamp(info(100, changedAt), changedAt + 1), sameLooking), false);
  assert.equal(
    unchangedSince(fileStamp(info(100, changedAt), changedAt + RACY_STAMP_MS), sameLooking),
    false,
  );
});

Deno.test("A stamp taken well after the file's change tells unchanged from changed", () => {
  const changedAt = 1_000_000;
  const stamp = fileStamp(info(100, changedAt), changedAt + RACY_STAMP_MS + 1);
  assert.equal(unchangedSince(stamp, info(100, changedAt)), true);
  assert.equal(unchangedSince(stamp, info(101, changedAt)), false, "another size");
  assert.equal(unchangedSince(stamp, info(100, changedAt + 1)), false, "another time");
  assert.equal(unchangedSince(undefined, info(100, changedAt)), false, "never read");
});
