/**
 * Test support: creates symbolic links. `Deno.symlink` needs unscoped read and write permissions, and the test
 * task grants read and write only for the repository and /tmp, so links are made by `ln` as an operator would.
 * Only tests import this file.
 *
 * @module
 */

/** Creates the link `path` pointing at `target` (relative targets resolve from the link's folder), like `ln -s`. */
export async function symlink(target: string, path: string): Promise<void> {
  const { code, stderr } = await new Deno.Command("ln", {
    args: ["-s", "--", target, path],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  if (code !== 0) {
    throw new Error(`ln -s "${target}" "${path}" failed: ${new TextDecoder().decode(stderr).trim()}`);
  }
}
