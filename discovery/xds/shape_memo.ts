/**
 * Generation results shared by proxies of the same shape. A generator that declares `shapeOf` promises that
 * proxies with equal shapes get equal resources for the same snapshot and request, so the server generates
 * once per shape and every such proxy reuses the list. The memo is cleared on every push, because endpoint
 * data can change without a new snapshot.
 *
 * @module
 */
import type { GenerateRequest } from "../generate/generator.ts";
import type { VersionedResource } from "./versioned_resource.ts";

interface Memoized {
  readonly push: object;
  readonly resources: readonly VersionedResource[];
}

/**
 * Joined forms of name lists and change sets, by identity: a connection keeps its watched names in one array
 * until they change, and one push hands the same change set to every connection, so each is joined once
 * rather than once per proxy per push (3000 names at a full view).
 */
const joinedLists = new WeakMap<readonly string[], string>();
const joinedSets = new WeakMap<ReadonlySet<string>, string>();

function joinedList(names: readonly string[]): string {
  let joined = joinedLists.get(names);
  if (joined === undefined) {
    joined = names.join("\u0001");
    joinedLists.set(names, joined);
  }
  return joined;
}

function joinedSet(changes: ReadonlySet<string>): string {
  let joined = joinedSets.get(changes);
  if (joined === undefined) {
    joined = [...changes].sort().join("\u0001");
    joinedSets.set(changes, joined);
  }
  return joined;
}

/**
 * The memo key of one generation: who (flavour, shape), what (type, names) and why (full, changes). Name
 * lists and change sets must not be modified after they are first used here (they are read-only throughout).
 */
export function shapeMemoKey(
  flavor: string,
  typeUrl: string,
  shape: string,
  request: GenerateRequest,
): string {
  const changes = request.configsUpdated === undefined ? "*" : joinedSet(request.configsUpdated);
  return [flavor, typeUrl, shape, request.full ? "full" : "partial", changes, joinedList(request.names)]
    .join("\u0000");
}

/** Resource lists by memo key, valid for one snapshot until the next push. */
export class ShapeMemo {
  readonly #results = new Map<string, Memoized>();

  /** The list generated for `key` from `push`, if any. */
  get(key: string, push: object): readonly VersionedResource[] | undefined {
    const hit = this.#results.get(key);
    return hit !== undefined && hit.push === push ? hit.resources : undefined;
  }

  /** Remembers the list generated for `key` from `push`. */
  set(key: string, push: object, resources: readonly VersionedResource[]): void {
    this.#results.set(key, { push, resources });
  }

  /** Forgets everything; called on every push. */
  clear(): void {
    this.#results.clear();
  }

  /** Number of remembered lists. */
  get size(): number {
    return this.#results.size;
  }
}
