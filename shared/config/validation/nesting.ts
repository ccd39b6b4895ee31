/**
 * How deep a document's objects and arrays nest, found without recursion. Documents are copied, frozen,
 * compared and encoded by code that recurses, and the runtime's structured clone gives up between 2,000 and
 * 3,000 levels: an EnvoyFilter patch value nested 3,000 deep (18 KB, and the orchestrator's API server accepts
 * 10,000) passed validation, then failed the store's copy with an exception that ended the server, and the
 * server failed the same way on every restart, as it listed the object again.
 *
 * @module
 */
import { childPath } from "./report.ts";

/**
 * Objects and arrays nested deeper than this refuse the document: the same bound as the config directory's
 * check of a YAML text's flow collections. An Envoy configuration in an EnvoyFilter patch nests about 20.
 */
export const MAX_NESTING = 100;

/** Where a value first nests past the bound: the path of the container one level too deep. */
export interface DeepValue {
  readonly path: string;
  readonly maxDepth: number;
}

interface Step {
  readonly value: unknown;
  readonly depth: number;
  readonly parent: Step | undefined;
  readonly key: string | number | undefined;
}

/** The first place `value` nests objects or arrays more than `maxDepth` deep, or undefined. */
export function deepValue(value: unknown, maxDepth = MAX_NESTING): DeepValue | undefined {
  const pending: Step[] = [{ value, depth: 1, parent: undefined, key: undefined }];
  while (pending.length > 0) {
    const step = pending.pop()!;
    if (step.value === null || typeof step.value !== "object") continue;
    if (step.depth > maxDepth) return { path: pathOf(step), maxDepth };
    if (Array.isArray(step.value)) {
      for (let i = step.value.length - 1; i >= 0; i--) {
        pending.push({ value: step.value[i], depth: step.depth + 1, parent: step, key: i });
      }
    } else {
      for (const key in step.value) {
        pending.push({
          value: (step.value as Record<string, unknown>)[key],
          depth: step.depth + 1,
          parent: step,
          key,
        });
      }
    }
  }
  return undefined;
}

function pathOf(step: Step): string {
  const keys: (string | number)[] = [];
  for (let s: Step | undefined = step; s?.key !== undefined; s = s.parent) keys.push(s.key);
  return keys.reverse().reduce<string>((path, key) => childPath(path, key), "");
}
