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

interface MemoizedByName {
  readonly push: object;
  readonly byName: Map<string, VersionedResource | null>;
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
 * The memo key of one generation but for the names: who (flavour, shape), what type and why (full,
 * changes). Change sets must not be modified after they are first used here (they are read-only throughout).
 */
export function shapeMemoPrefix(
  flavor: string,
  typeUrl: string,
  shape: string,
  request: GenerateRequest,
): string {
  const changes = request.configsUpdated === undefined ? "*" : joinedSet(request.configsUpdated);
  return [flavor, typeUrl, shape, request.full ? "full" : "partial", changes].join("\u0000");
}

/**
 * The memo key of one generation: its {@link shapeMemoPrefix} and the names asked for. Name lists must not
 * be modified after they are first used here.
 */
export function shapeMemoKey(prefix: string, names: readonly string[]): string {
  return `${prefix}\u0000${joinedList(names)}`;
}

/**
 * Resource lists by memo key, and single resources by memo prefix and name, valid for one snapshot until the
 * next push.
 */
export class ShapeMemo {
  readonly #results = new Map<string, Memoized>();
  readonly #byName = new Map<string, MemoizedByName>();

  /** The list generated for `key` from `push`, if any. */
  get(key: string, push: object): readonly VersionedResource[] | undefined {
    const hit = this.#results.get(key);
    return hit !== undefined && hit.push === push ? hit.resources : undefined;
  }

  /** Remembers the list generated for `key` from `push`. */
  set(key: string, push: object, resources: readonly VersionedResource[]): void {
    this.#results.set(key, { push, resources });
  }

  /**
   * What each name generated for `prefix` from `push`: its resource, or null when the name gave none. The
   * caller adds what it generates; the map starts empty for a new snapshot.
   */
  byName(prefix: string, push: object): Map<string, VersionedResource | null> {
    const hit = this.#byName.get(prefix);
    if (hit !== undefined && hit.push === push) return hit.byName;
    const byName = new Map<string, VersionedResource | null>();
    this.#byName.set(prefix, { push, byName });
    return byName;
  }

  /** Forgets everything; called on every push. */
  clear(): void {
    this.#results.clear();
    this.#byName.clear();
  }

  /** Number of remembered lists. */
  get size(): number {
    return this.#results.size;
  }
}
