/**
 * Optional files the agent reads at startup (pod annotations and labels, the mesh root, the token).
 *
 * @module
 */
import { existsSync } from "node:fs";

/** The text of `path`, or undefined when there is no such file. */
export function readIfExists(path: string): string | undefined {
  return existsSync(path) ? Deno.readTextFileSync(path) : undefined;
}
