/**
 * glibc's `malloc_trim(0)` through FFI. The runtime's native allocations (HTTP/2 sessions and frames, socket
 * buffers, ArrayBuffer backing stores) made on the main thread come from glibc's main arena, the `[heap]`
 * mapping grown with brk. glibc hands memory back by itself only from the top of that mapping, so once a
 * burst has freed chunks below a chunk still in use, the freed pages stay resident for good; `malloc_trim`
 * walks every arena and returns the pages of every free chunk (MADV_DONTNEED), wherever they lie.
 *
 * The library is looked for as {@link openGlibc} does.
 *
 * @module
 */
import { type GlibcLookup, openGlibc } from "./glibc_library.ts";

/** Hands free native heap pages back to the kernel; resolves with whether glibc released any. */
export type MallocTrim = () => Promise<boolean>;

/** `malloc_trim` bound, or why it is not available here. */
export type MallocTrimBinding =
  | { readonly trim: MallocTrim; readonly library: string }
  | { readonly unavailable: string };

/**
 * Binds glibc's `malloc_trim`, called off the event loop (a nonblocking FFI call runs on a blocking thread;
 * glibc takes each arena's lock, so it is safe beside the runtime's own threads). Never throws: on another OS,
 * without the permission, or without glibc, says why in `unavailable`.
 */
export function openMallocTrim(lookup: GlibcLookup = {}): MallocTrimBinding {
  const libc = openGlibc("malloc_trim", {
    malloc_trim: { parameters: ["usize"], result: "i32", nonblocking: true },
  }, lookup);
  if ("unavailable" in libc) return libc;
  const { symbols, library } = libc;
  return { trim: async () => (await symbols.malloc_trim(0n)) === 1, library };
}
