/**
 * Raises the process's soft limit on open file descriptors (RLIMIT_NOFILE) to its hard limit, as servers do at
 * start: every connection is a descriptor, and the usual soft limit of 1024 is far below what a server holding
 * thousands of proxies needs. `deno run` already does so before any script runs (Deno 2.9.3, cli/lib.rs), but a
 * `deno compile` binary does not. Deno has no setrlimit; `prlimit` (util-linux) sets it on the process from
 * outside, needing only `--allow-run=prlimit`, where calling libc through FFI would need `--allow-ffi`, which
 * grants everything.
 *
 * @module
 */
import type { Logger } from "../log/logger.ts";

/** The soft and hard RLIMIT_NOFILE of a process; `Infinity` for unlimited. */
export interface DescriptorLimit {
  readonly soft: number;
  readonly hard: number;
}

/** What raising the limit did. */
export type DescriptorLimitOutcome =
  | { readonly raised: true; readonly before: DescriptorLimit; readonly after: DescriptorLimit }
  | { readonly raised: false; readonly limit: DescriptorLimit }
  | { readonly raised: false; readonly error: string };

/** Runs `prlimit` with `args`; the text it printed, or an Error naming why it failed. */
export type PrlimitRunner = (args: readonly string[]) => Promise<string>;

/** Runs the `prlimit` on PATH. */
export const runPrlimit: PrlimitRunner = async (args) => {
  const output = await new Deno.Command("prlimit", { args: [...args], stdout: "piped", stderr: "piped" })
    .output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes).trim();
  if (!output.success) {
    throw new Error(`prlimit exited with code ${output.code}: ${decode(output.stderr).slice(0, 200)}`);
  }
  return decode(output.stdout);
};

function parseLimit(value: string): number {
  return value === "unlimited" ? Infinity : Number(value);
}

/** The RLIMIT_NOFILE of process `pid`, read with `prlimit`. */
export async function descriptorLimit(
  pid: number,
  run: PrlimitRunner = runPrlimit,
): Promise<DescriptorLimit> {
  const text = await run(["--pid", String(pid), "--nofile", "--raw", "--noheadings", "--output=SOFT,HARD"]);
  const [soft, hard] = text.split(/\s+/).map(parseLimit);
  if (!(soft >= 0 && hard >= 0)) {
    throw new TypeError(`Unexpected prlimit output "${text.slice(0, 80)}": expected "<soft> <hard>"`);
  }
  return { soft, hard };
}

/**
 * Raises process `pid`'s soft descriptor limit to its hard limit. Never throws: what went wrong (no `prlimit`,
 * no permission to run it) comes back as `error`.
 */
export async function raiseDescriptorLimit(
  pid: number = Deno.pid,
  run: PrlimitRunner = runPrlimit,
): Promise<DescriptorLimitOutcome> {
  try {
    const before = await descriptorLimit(pid, run);
    if (before.soft >= before.hard) return { raised: false, limit: before };
    const hard = before.hard === Infinity ? "unlimited" : String(before.hard);
    await run(["--pid", String(pid), `--nofile=${hard}:${hard}`]);
    return { raised: true, before, after: await descriptorLimit(pid, run) };
  } catch (error) {
    return { raised: false, error: error instanceof Error ? error.message : String(error) };
  }
}

/** Raises this process's descriptor limit and logs what came of it: info when done, warn when it could not. */
export async function raiseOwnDescriptorLimit(log: Logger, run: PrlimitRunner = runPrlimit): Promise<void> {
  const outcome = await raiseDescriptorLimit(Deno.pid, run);
  if ("error" in outcome) {
    log.warn(
      "could not raise the open file descriptor limit; connections past it are refused until some close",
      {
        error: outcome.error,
      },
    );
  } else if (outcome.raised) {
    log.info("raised the open file descriptor limit to its hard limit", {
      from: outcome.before.soft,
      to: outcome.after.soft,
    });
  } else {
    log.info("open file descriptor limit already at its hard limit", { limit: outcome.limit.soft });
  }
}
