/**
 * Saves what a diagnosis of retained memory needs from a running server at one moment (`--diagnose-dir`):
 * its `/proc/<pid>/smaps`, `/debug/cachez`, ControlZ's `/memj/` and, when asked (the server must run with
 * `--profile`), a V8 heap snapshot. Files are named `<prefix>.smaps`, `<prefix>.cachez.json`,
 * `<prefix>.memj.json` and `<prefix>.heapsnapshot`. Taking the snapshot runs a full collection, so it is
 * taken last, after every figure of the moment was read.
 *
 * @module
 */
import { readProc } from "../bench_processes.ts";

/** Where the server answers. */
export interface SnapshotTarget {
  readonly pid: number;
  readonly httpAddr: string;
  readonly ctrlzPort: string;
}

async function fetchText(url: string): Promise<string> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(120_000) });
    return await response.text();
  } catch (error) {
    return JSON.stringify({ error: error instanceof Error ? error.message : String(error) });
  }
}

/** Writes the files of one moment; returns their paths. */
export async function saveMemorySnapshot(
  target: SnapshotTarget,
  prefix: string,
  heap: boolean,
): Promise<string[]> {
  const files: [string, string][] = [
    [`${prefix}.smaps`, readProc(`/proc/${target.pid}/smaps`)],
    [`${prefix}.cachez.json`, await fetchText(`http://${target.httpAddr}/debug/cachez`)],
    [`${prefix}.memj.json`, await fetchText(`http://127.0.0.1:${target.ctrlzPort}/memj/`)],
  ];
  for (const [path, text] of files) await Deno.writeTextFile(path, text);
  const paths = files.map(([path]) => path);
  if (heap) {
    const path = `${prefix}.heapsnapshot`;
    await Deno.writeTextFile(path, await fetchText(`http://${target.httpAddr}/debug/pprof/heap`));
    paths.push(path);
  }
  return paths;
}
