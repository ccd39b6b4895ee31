/**
 * CPU time of the benchmark's processes over one phase, read from /proc before and after it.
 *
 * @module
 */
import { processCpuMs, type ThreadCpu, threadCpuMs } from "./bench_processes.ts";
import type { CpuUse } from "./load_report.ts";

/** CPU ms used by the server (split by thread with `threads`) and the load process during `run`. */
export async function withCpu<T>(
  server: number,
  agent: number,
  run: () => Promise<T>,
  threads = false,
): Promise<[T, CpuUse]> {
  const before = [processCpuMs(server), processCpuMs(agent)];
  const threadsBefore = threads ? threadCpuMs(server) : undefined;
  const result = await run();
  const use = { serverMs: processCpuMs(server) - before[0], loadMs: processCpuMs(agent) - before[1] };
  return [
    result,
    threadsBefore === undefined ? use : { ...use, serverThreads: threadCpuSince(threadsBefore, server) },
  ];
}

/** The server's CPU by thread since `before`. */
export function threadCpuSince(before: ThreadCpu, server: number): ThreadCpu {
  const now = threadCpuMs(server);
  return {
    mainMs: now.mainMs - before.mainMs,
    v8WorkersMs: now.v8WorkersMs - before.v8WorkersMs,
    otherMs: now.otherMs - before.otherMs,
  };
}
