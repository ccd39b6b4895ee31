import assert from "node:assert/strict";
import { openNativeHeapFigures, parseMallocInfo } from "./native_heap_figures.ts";

/** The shape glibc 2.36 writes: the main arena, one thread arena, then the totals. */
const XML = `<malloc version="1">
<heap nr="0">
<sizes>
  <size from="17" to="32" total="64" count="2"/>
  <unsorted from="481" to="481" total="481" count="1"/>
</sizes>
<total type="fast" count="2" size="64"/>
<total type="rest" count="34" size="416561"/>
<system type="current" size="2158592"/>
<system type="max" size="2158592"/>
<aspace type="total" size="2158592"/>
<aspace type="mprotect" size="2158592"/>
</heap>
<heap nr="1">
<sizes>
</sizes>
<total type="fast" count="0" size="0"/>
<total type="rest" count="1" size="132224"/>
<system type="current" size="135168"/>
<system type="max" size="135168"/>
<aspace type="total" size="135168"/>
<aspace type="mprotect" size="135168"/>
<aspace type="subheaps" size="1"/>
</heap>
<total type="fast" count="2" size="64"/>
<total type="rest" count="35" size="548785"/>
<total type="mmap" count="3" size="1200128"/>
<system type="current" size="2293760"/>
<system type="max" size="2293760"/>
<aspace type="total" size="2293760"/>
<aspace type="mprotect" size="2293760"/>
</malloc>
`;

Deno.test("parseMallocInfo reads each arena's system, free and in-use bytes and the mmapped chunks", () => {
  assert.deepEqual(parseMallocInfo(XML), {
    arenas: [
      { arena: 0, systemBytes: 2158592, freeBytes: 416625, inUseBytes: 2158592 - 416625 },
      { arena: 1, systemBytes: 135168, freeBytes: 132224, inUseBytes: 2944 },
    ],
    mmappedChunks: 3,
    mmappedBytes: 1200128,
  });
});

Deno.test("parseMallocInfo refuses output cut short instead of reading part of it", () => {
  assert.throws(() => parseMallocInfo(XML.slice(0, 400)), SyntaxError);
  assert.throws(() => parseMallocInfo(""), /expected a <malloc> document, got 0 bytes/);
});

Deno.test("openNativeHeapFigures reads this process's arenas, and sees a native allocation in use", {
  ignore: Deno.build.os !== "linux",
}, () => {
  const binding = openNativeHeapFigures();
  assert.ok("read" in binding, JSON.stringify(binding));
  const before = binding.read();
  assert.equal(before.arenas[0].arena, 0);
  for (const arena of before.arenas) {
    assert.ok(arena.systemBytes > 0 && arena.freeBytes >= 0 && arena.inUseBytes > 0, JSON.stringify(arena));
  }
  // Below glibc's mmap threshold but far above the noise: sixteen 64 KiB backing stores come from an arena.
  const held = Array.from({ length: 16 }, () => new Uint8Array(64 * 1024).fill(1));
  const after = binding.read();
  const inUse = (figures: typeof before) => figures.arenas.reduce((sum, a) => sum + a.inUseBytes, 0);
  assert.ok(inUse(after) - inUse(before) >= 1024 * 1024, `${inUse(before)} -> ${inUse(after)}`);
  assert.equal(held.length, 16);
});

Deno.test("openNativeHeapFigures says why it cannot read instead of throwing", () => {
  assert.deepEqual(openNativeHeapFigures({ os: "darwin" }), {
    unavailable: "malloc_info is glibc's; this is darwin",
  });
});
