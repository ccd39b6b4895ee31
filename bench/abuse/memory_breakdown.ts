/**
 * Where a server's resident memory lies, for telling state the server keeps from memory the allocator keeps:
 * `/proc/<pid>/smaps` split into glibc's main arena (`[heap]`, grown with brk, where the runtime's native
 * allocations on the main thread go), other anonymous mappings (V8's heap, other arenas, stacks) and file
 * pages; and V8's own figures and glibc's from ControlZ `/memj/` (what the runtime holds in use against what
 * glibc keeps free, all arenas and the main arena's share).
 *
 * @module
 */
import { readProc } from "../bench_processes.ts";

/** A server's memory at one moment, in MiB. */
export interface MemoryBreakdown {
  /** Resident pages of the `[heap]` mapping: glibc's main arena. */
  readonly brkHeapMiB: number;
  /** Resident anonymous pages outside `[heap]`. */
  readonly otherAnonMiB: number;
  /** Resident file-backed pages (the runtime binary and libraries). */
  readonly fileMiB: number;
  /** V8's heap as reserved and as used, and the memory of ArrayBuffers and other external objects. */
  readonly v8?: { readonly heapTotalMiB: number; readonly heapUsedMiB: number; readonly externalMiB: number };
  /** glibc's bytes in use and free, in all arenas and in the main arena; absent where the server cannot read them. */
  readonly native?: {
    readonly inUseMiB: number;
    readonly freeMiB: number;
    readonly mainInUseMiB: number;
    readonly mainFreeMiB: number;
  };
}

const KIB_PER_MIB = 1024;

/** Sums the `Rss:` lines of `smaps` text by kind of mapping. */
export function splitSmaps(smaps: string): Omit<MemoryBreakdown, "v8" | "native"> {
  let kind: "brk" | "anon" | "file" = "anon";
  const kib = { brk: 0, anon: 0, file: 0 };
  for (const line of smaps.split("\n")) {
    const mapping = /^[0-9a-f]+-[0-9a-f]+\s+\S+\s+\S+\s+\S+\s+\d+\s*(.*)$/.exec(line);
    if (mapping) {
      const name = mapping[1];
      kind = name === "[heap]" ? "brk" : name.startsWith("/") ? "file" : "anon";
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) kib[kind] += Number(rss[1]);
  }
  return {
    brkHeapMiB: Math.round(kib.brk / KIB_PER_MIB),
    otherAnonMiB: Math.round(kib.anon / KIB_PER_MIB),
    fileMiB: Math.round(kib.file / KIB_PER_MIB),
  };
}

/** Reads `pid`'s smaps and, when `ctrlzPort` answers, V8's figures. */
export async function memoryBreakdown(pid: number, ctrlzPort: string): Promise<MemoryBreakdown> {
  const mapped = splitSmaps(readProc(`/proc/${pid}/smaps`));
  try {
    const response = await fetch(`http://127.0.0.1:${ctrlzPort}/memj/`, {
      signal: AbortSignal.timeout(5_000),
    });
    const usage = await response.json() as Record<string, number>;
    const mib = (bytes: number) => Math.round(bytes / 1048576);
    return {
      ...mapped,
      v8: {
        heapTotalMiB: mib(usage.heapTotal),
        heapUsedMiB: mib(usage.heapUsed),
        externalMiB: mib(usage.external),
      },
      ...(usage.nativeInUse !== undefined && {
        native: {
          inUseMiB: mib(usage.nativeInUse),
          freeMiB: mib(usage.nativeFree),
          mainInUseMiB: mib(usage.mainArenaInUse),
          mainFreeMiB: mib(usage.mainArenaFree),
        },
      }),
    };
  } catch {
    return mapped;
  }
}

/** `a → b` for each figure, e.g. for a report line. */
export function describeChange(idle: MemoryBreakdown, after: MemoryBreakdown): string {
  const parts = [
    `[heap] ${idle.brkHeapMiB} → ${after.brkHeapMiB}`,
    `other anonymous ${idle.otherAnonMiB} → ${after.otherAnonMiB}`,
  ];
  if (idle.v8 && after.v8) {
    parts.push(
      `V8 heap total ${idle.v8.heapTotalMiB} → ${after.v8.heapTotalMiB} (used ${idle.v8.heapUsedMiB} → ${after.v8.heapUsedMiB})`,
      `external ${idle.v8.externalMiB} → ${after.v8.externalMiB}`,
    );
  }
  if (idle.native && after.native) {
    parts.push(
      `glibc in use ${idle.native.inUseMiB} → ${after.native.inUseMiB} (main arena ${idle.native.mainInUseMiB} → ${after.native.mainInUseMiB})`,
      `glibc free ${idle.native.freeMiB} → ${after.native.freeMiB} (main arena ${idle.native.mainFreeMiB} → ${after.native.mainFreeMiB})`,
    );
  }
  return `${parts.join(", ")} MiB`;
}
