/** Test support: golden files, and running shell scripts in a private network namespace. */

import assert from "node:assert/strict";

/** The directory holding golden files. */
export const TESTDATA = new URL("./testdata/", import.meta.url);

/**
 * Compares `actual` with `testdata/<name>`; with `update` (the test reads `UPDATE_GOLDEN=1`) rewrites the file
 * first. A missing golden fails with a hint instead of passing silently.
 */
export async function assertGolden(name: string, actual: string, update: boolean): Promise<void> {
  const url = new URL(name, TESTDATA);
  if (update) await Deno.writeTextFile(url, actual);
  let expected: string;
  try {
    expected = await Deno.readTextFile(url);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      assert.fail(`Golden file "${name}" is missing: run with UPDATE_GOLDEN=1`);
    }
    throw error;
  }
  assert.equal(actual, expected, `Output differs from golden file "${name}" (UPDATE_GOLDEN=1 rewrites it)`);
}

/** What a namespaced script printed. */
export interface NetnsResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `script` with `sh` inside a new network namespace (`unshare -n`) with lo up, feeding `stdin`. The
 * namespace dies with the process, so nothing leaks onto the host. Needs root and `--allow-run=unshare`;
 * when unshare is not permitted the caller's assertion fails with its stderr, never skips.
 */
export async function runInNetns(script: string, stdin?: string): Promise<NetnsResult> {
  const child = new Deno.Command("unshare", {
    args: ["-n", "sh", "-c", `ip link set lo up && ${script}`],
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(stdin));
    await writer.close();
  }
  const output = await child.output();
  const decoder = new TextDecoder();
  return { code: output.code, stdout: decoder.decode(output.stdout), stderr: decoder.decode(output.stderr) };
}

/** Asserts a namespaced script exited 0, showing its output otherwise. */
export function assertNetnsOk(result: NetnsResult, what: string): void {
  assert.equal(
    result.code,
    0,
    `${what} failed in a private network namespace (exit ${result.code}; needs root and unshare):\n` +
      `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`,
  );
}
