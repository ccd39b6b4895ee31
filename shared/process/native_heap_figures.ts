/**
 * What glibc's allocator holds, arena by arena, from `malloc_info`: how much each arena took from the kernel
 * and how much of that is in free chunks. It tells the two reasons native memory stays resident after a burst
 * apart: chunks glibc counts in use (the program's allocations, and freed chunks a thread keeps in its own
 * cache) and free chunks in pages shared with used ones (fragmentation, which no trim returns).
 *
 * `malloc_info` writes XML to a `FILE*`; the stream is opened with `fmemopen` on a buffer this module owns, so
 * no native pointer is ever read (that would need FFI permission for everything, not the system libraries).
 *
 * @module
 */
import { type GlibcLookup, openGlibc } from "./glibc_library.ts";

/** One arena of glibc's allocator. */
export interface ArenaFigures {
  /** 0 is the main arena, the `[heap]` mapping the main thread allocates from; the others serve other threads. */
  readonly arena: number;
  /** Bytes the arena took from the kernel; pages a trim gave back still count until the arena shrinks. */
  readonly systemBytes: number;
  /** Bytes in free chunks, the arena's top chunk included. */
  readonly freeBytes: number;
  /** Bytes in chunks outside glibc's free lists: in use, or cached by a thread. */
  readonly inUseBytes: number;
}

/** Every arena, and the chunks glibc mapped on their own (allocations past the mmap threshold). */
export interface NativeHeapFigures {
  readonly arenas: readonly ArenaFigures[];
  readonly mmappedChunks: number;
  readonly mmappedBytes: number;
}

/** Reads the figures now; takes each arena's lock for a walk of its free lists. */
export type ReadNativeHeap = () => NativeHeapFigures;

/** The reader, or why there is none here. */
export type NativeHeapBinding =
  | { readonly read: ReadNativeHeap; readonly library: string }
  | { readonly unavailable: string };

/** Room for `malloc_info`'s XML: a few hundred bytes per arena plus a line per size class with free chunks. */
const XML_BUFFER_BYTES = 1024 * 1024;

/** The `size` (or `count`) attribute of the element `<tag type="type" …/>` in `xml`, or 0 when absent. */
function attribute(xml: string, tag: string, type: string, name: "size" | "count"): number {
  const element = xml.match(new RegExp(`<${tag} type="${type}"[^>]*>`))?.[0];
  const value = element?.match(new RegExp(`${name}="(\\d+)"`))?.[1];
  return value === undefined ? 0 : Number(value);
}

/**
 * Parses the XML of `malloc_info(0, …)` (glibc 2.10 and later).
 *
 * @throws {SyntaxError} when `xml` is not a complete `<malloc>` document
 */
export function parseMallocInfo(xml: string): NativeHeapFigures {
  const end = xml.lastIndexOf("</malloc>");
  if (!xml.trimStart().startsWith("<malloc") || end < 0) {
    throw new SyntaxError(
      `Invalid malloc_info output: expected a <malloc> document, got ${xml.length} bytes`,
    );
  }
  const arenas: ArenaFigures[] = [];
  for (const heap of xml.matchAll(/<heap nr="(\d+)">([\s\S]*?)<\/heap>/g)) {
    const body = heap[2];
    const systemBytes = attribute(body, "system", "current", "size");
    const freeBytes = attribute(body, "total", "fast", "size") + attribute(body, "total", "rest", "size");
    arenas.push({ arena: Number(heap[1]), systemBytes, freeBytes, inUseBytes: systemBytes - freeBytes });
  }
  const totals = xml.slice(xml.lastIndexOf("</heap>") + 1, end);
  return {
    arenas,
    mmappedChunks: attribute(totals, "total", "mmap", "count"),
    mmappedBytes: attribute(totals, "total", "mmap", "size"),
  };
}

/** Binds `malloc_info` where glibc can be opened (see `openGlibc`); never throws. */
export function openNativeHeapFigures(lookup: GlibcLookup = {}): NativeHeapBinding {
  const libc = openGlibc("malloc_info", {
    fmemopen: { parameters: ["buffer", "usize", "buffer"], result: "pointer" },
    malloc_info: { parameters: ["i32", "pointer"], result: "i32" },
    fclose: { parameters: ["pointer"], result: "i32" },
  }, lookup);
  if ("unavailable" in libc) return libc;
  const { symbols, library } = libc;
  const mode = new TextEncoder().encode("w\0");
  const read = () => {
    // The buffer outlives the stream: glibc writes into it until fclose, and V8 never moves its bytes.
    const buffer = new Uint8Array(XML_BUFFER_BYTES);
    const stream = symbols.fmemopen(buffer, BigInt(buffer.length), mode);
    if (stream === null) throw new Error("fmemopen failed: no stream to read malloc_info into");
    const status = symbols.malloc_info(0, stream);
    symbols.fclose(stream);
    if (status !== 0) throw new Error(`malloc_info failed with ${status}`);
    const length = buffer.indexOf(0);
    return parseMallocInfo(new TextDecoder().decode(buffer.subarray(0, length < 0 ? buffer.length : length)));
  };
  return { read, library };
}
