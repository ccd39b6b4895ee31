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

/** The memo key of one generation: who (flavour, shape), what (type, names) and why (full, changes). */
export function shapeMemoKey(
  flavor: string,
  typeUrl: string,
  shape: string,
  request: GenerateRequest,
): string {
  const changes = request.configsUpdated === undefined
    ? "*"
    : [...request.configsUpdated].sort().join("\u0001");
  return [flavor, typeUrl, shape, request.full ? "full" : "partial", changes, request.names.join("\u0001")]
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
