/**
 * glibc's `malloc_trim(0)` through FFI. The runtime's native allocations (HTTP/2 sessions and frames, socket
 * buffers, ArrayBuffer backing stores) made on the main thread come from glibc's main arena, the `[heap]`
 * mapping grown with brk. glibc hands memory back by itself only from the top of that mapping, so once a
 * burst has freed chunks below a chunk still in use, the freed pages stay resident for good; `malloc_trim`
 * walks every arena and returns the pages of every free chunk (MADV_DONTNEED), wherever they lie.
 *
 * Deno's FFI permission lets native code do anything, so the library is opened only by an absolute path under
 * the system library directories (`--allow-ffi=/lib,/usr/lib,/lib64,/usr/lib64` grants exactly those), and
 * only when that permission was granted: without it, or on another libc, trimming is reported unavailable and
 * the caller runs without it.
 *
 * @module
 */

/** Hands free native heap pages back to the kernel; resolves with whether glibc released any. */
export type MallocTrim = () => Promise<boolean>;

/** `malloc_trim` bound, or why it is not available here. */
export type MallocTrimBinding =
  | { readonly trim: MallocTrim; readonly library: string }
  | { readonly unavailable: string };

/** The system library directories the FFI permission is granted for; libc is looked for only there. */
export const SYSTEM_LIBRARY_DIRS: readonly string[] = ["/lib", "/usr/lib", "/lib64", "/usr/lib64"];

/** Where glibc's shared object lies on Debian-like (multiarch) and Red Hat-like systems. */
export function libcCandidates(arch: string = Deno.build.arch): string[] {
  const multiarch = `${arch}-linux-gnu`;
  return [
    `/lib/${multiarch}/libc.so.6`,
    `/usr/lib/${multiarch}/libc.so.6`,
    "/lib64/libc.so.6",
    "/usr/lib64/libc.so.6",
  ];
}

/** Whether FFI is granted for `path`, asked without prompting. */
function ffiGranted(path: string): boolean {
  return Deno.permissions.querySync({ name: "ffi", path }).state === "granted";
}

/** How {@link openMallocTrim} looks for libc; the defaults read this process and this machine. */
export interface MallocTrimLookup {
  readonly os?: string;
  readonly candidates?: readonly string[];
  readonly granted?: (path: string) => boolean;
}

/**
 * Binds glibc's `malloc_trim`, called off the event loop (a nonblocking FFI call runs on a blocking thread;
 * glibc takes each arena's lock, so it is safe beside the runtime's own threads). Never throws: on another OS,
 * without the permission, or without glibc, says why in `unavailable`.
 */
export function openMallocTrim(lookup: MallocTrimLookup = {}): MallocTrimBinding {
  const os = lookup.os ?? Deno.build.os;
  if (os !== "linux") return { unavailable: `malloc_trim is glibc's; this is ${os}` };
  const candidates = lookup.candidates ?? libcCandidates();
  const granted = candidates.filter(lookup.granted ?? ffiGranted);
  if (granted.length === 0) {
    return {
      unavailable: `FFI is not granted for glibc at ${candidates.map((c) => `"${c}"`).join(", ")} ` +
        `(--allow-ffi=${SYSTEM_LIBRARY_DIRS.join(",")})`,
    };
  }
  const errors: string[] = [];
  for (const library of granted) {
    try {
      const libc = Deno.dlopen(library, {
        malloc_trim: { parameters: ["usize"], result: "i32", nonblocking: true },
      });
      return { trim: async () => (await libc.symbols.malloc_trim(0n)) === 1, library };
    } catch (error) {
      errors.push(`"${library}": ${(error as Error).message}`);
    }
  }
  return { unavailable: `No glibc with malloc_trim: ${errors.join("; ")}` };
}
