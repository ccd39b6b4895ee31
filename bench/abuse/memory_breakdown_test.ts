import assert from "node:assert/strict";
import { describeChange, splitSmaps } from "./memory_breakdown.ts";

const SMAPS = `55d0c0000000-55d0c4000000 r-xp 00000000 08:01 1234 /usr/bin/deno
Size:              65536 kB
Rss:               61440 kB
55d0d0000000-55d0de000000 rw-p 00000000 00:00 0 [heap]
Rss:              235520 kB
7f0000000000-7f0004000000 rw-p 00000000 00:00 0
Rss:               40960 kB
7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0 [stack]
Rss:                1024 kB
`;

Deno.test("splitSmaps puts glibc's main arena, other anonymous memory and file pages apart", () => {
  assert.deepEqual(splitSmaps(SMAPS), { brkHeapMiB: 230, otherAnonMiB: 41, fileMiB: 60 });
});

Deno.test("describeChange names each figure from idle to after", () => {
  const idle = { brkHeapMiB: 23, otherAnonMiB: 205, fileMiB: 61 };
  assert.equal(
    describeChange(idle, { ...idle, brkHeapMiB: 36 }),
    "[heap] 23 → 36, other anonymous 205 → 205 MiB",
  );
});

Deno.test("describeChange names glibc's in-use and free bytes when the server reports them", () => {
  const native = { inUseMiB: 40, freeMiB: 10, mainInUseMiB: 20, mainFreeMiB: 6 };
  const idle = { brkHeapMiB: 23, otherAnonMiB: 205, fileMiB: 61, native };
  assert.equal(
    describeChange(idle, { ...idle, native: { ...native, mainInUseMiB: 41, inUseMiB: 61 } }),
    "[heap] 23 → 23, other anonymous 205 → 205, glibc in use 40 → 61 (main arena 20 → 41), " +
      "glibc free 10 → 10 (main arena 6 → 6) MiB",
  );
});
