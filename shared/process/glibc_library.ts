/**
 * Opens glibc through FFI for the process's own memory housekeeping (`malloc_trim`, `malloc_info`).
 *
 * Deno's FFI permission lets native code do anything, so the library is opened only by an absolute path under
 * the system library directories (`--allow-ffi=/lib,/usr/lib,/lib64,/usr/lib64` grants exactly those), and
 * only when that permission was granted: without it, or on another libc, the caller is told why and runs
 * without the feature.
 *
 * @module
 */

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

/** How {@link openGlibc} looks for libc; the defaults read this process and this machine. */
export interface GlibcLookup {
  readonly os?: string;
  readonly candidates?: readonly string[];
  readonly granted?: (path: string) => boolean;
}

/** glibc opened with `symbols` bound, or why it could not be. */
export type GlibcBinding<S extends Deno.ForeignLibraryInterface> =
  | { readonly symbols: Deno.StaticForeignLibraryInterface<S>; readonly library: string }
  | { readonly unavailable: string };

/**
 * Binds `symbols` of glibc, found by {@link libcCandidates} where FFI is granted. Never throws: on another OS,
 * without the permission, or without glibc, says why in `unavailable`, naming `what` the caller wanted.
 */
export function openGlibc<S extends Deno.ForeignLibraryInterface>(
  what: string,
  symbols: S,
  lookup: GlibcLookup = {},
): GlibcBinding<S> {
  const os = lookup.os ?? Deno.build.os;
  if (os !== "linux") return { unavailable: `${what} is glibc's; this is ${os}` };
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
      return { symbols: Deno.dlopen(library, symbols).symbols, library };
    } catch (error) {
      errors.push(`"${library}": ${(error as Error).message}`);
    }
  }
  return { unavailable: `No glibc with ${what}: ${errors.join("; ")}` };
}
