/**
 * The process's memory as ControlZ's `/memj/` and `/memz/` show it: V8's figures and, where glibc can be read,
 * its arenas. RSS that V8's figures do not explain is native: `nativeInUse` is what glibc counts in use (the
 * runtime's allocations, and chunks threads keep cached), `nativeFree` what it keeps in free chunks, and the
 * main arena's share (the `[heap]` mapping the main thread allocates from) tells free pages kept there from
 * chunks in use.
 *
 * @module
 */
import type { ReadNativeHeap } from "@mesh/shared/process/native_heap_figures";

/** Byte counts by name, flat so the page can show and chart each. */
export type MemoryFigures = Record<string, number>;

/** `Deno.memoryUsage()` plus glibc's figures when `nativeHeap` is given and answers. */
export function memoryFigures(nativeHeap?: ReadNativeHeap): MemoryFigures {
  const figures: MemoryFigures = { ...Deno.memoryUsage() };
  if (nativeHeap === undefined) return figures;
  let heap;
  try {
    heap = nativeHeap();
  } catch {
    // A page of figures stays up without glibc's; the reader's failures are not the operator's to act on.
    return figures;
  }
  const main = heap.arenas.find((a) => a.arena === 0);
  figures.nativeInUse = heap.mmappedBytes + heap.arenas.reduce((sum, a) => sum + a.inUseBytes, 0);
  figures.nativeFree = heap.arenas.reduce((sum, a) => sum + a.freeBytes, 0);
  if (main !== undefined) {
    figures.mainArenaInUse = main.inUseBytes;
    figures.mainArenaFree = main.freeBytes;
  }
  return figures;
}
