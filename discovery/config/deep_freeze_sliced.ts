import type { LoopSlices } from "@mesh/shared/time/loop_slices";

/** Objects visited between two looks at the slice's clock. */
const CHECK_EVERY = 512;

/**
 * Deep-freezes a plain value in slices of the event loop, as `deepFreeze` does in one go: a resource of a
 * megabyte (tens of thousands of routes or endpoints) has hundreds of thousands of objects. Objects are frozen
 * children first, so at every pause a frozen object's whole subtree is frozen already: a `deepFreeze` that
 * skips frozen objects stays correct in between.
 */
export async function deepFreezeSliced(value: unknown, slices: LoopSlices): Promise<void> {
  // A frozen root is frozen through (see above): a reload re-offers every unchanged resource.
  if (value === null || typeof value !== "object" || Object.isFrozen(value)) return;
  const found: object[] = [];
  // Parsed YAML may share a node (an alias) in several places, or hold itself.
  const seen = new Set<object>();
  const stack: unknown[] = [value];
  let visited = 0;
  while (stack.length > 0) {
    const next = stack.pop();
    if (next === null || typeof next !== "object" || Object.isFrozen(next) || seen.has(next)) continue;
    seen.add(next);
    found.push(next);
    for (const child of Object.values(next)) {
      if (child !== null && typeof child === "object") stack.push(child);
    }
    if (++visited % CHECK_EVERY === 0) await slices.pause();
  }
  // A parent comes before its children in `found`: freezing from the end freezes every child first.
  for (let i = found.length - 1; i >= 0; i--) {
    Object.freeze(found[i]);
    if (i % CHECK_EVERY === 0) await slices.pause();
  }
}
