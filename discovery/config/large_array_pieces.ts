/**
 * Cuts the large arrays out of a plain-data value so that it can cross a worker boundary in bounded messages:
 * a structured-clone message is decoded in one go on the receiving thread, however large it is.
 *
 * @module
 */

/** Where a detached array sits: keys and indices from the root of the value. */
export type ValuePath = readonly (string | number)[];

/** Consecutive elements of a detached array, to append to the (then shorter) array at `path`. */
export interface ArrayPiece {
  readonly path: ValuePath;
  readonly items: readonly unknown[];
}

/** A value with its large arrays left empty, and the pieces that fill them back, in the order to apply them. */
export interface DetachedValue {
  readonly value: unknown;
  readonly pieces: readonly ArrayPiece[];
}

/** Nodes (arrays, objects, scalars) a piece carries, unless told otherwise. */
export const NODES_PER_PIECE = 2048;

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype;

/** Counts the nodes of plain data: what structured cloning visits, a proxy for its decoding cost. */
export function countNodes(value: unknown): number {
  if (Array.isArray(value)) {
    let n = 1;
    for (const item of value) n += countNodes(item);
    return n;
  }
  if (isPlainObject(value)) {
    let n = 1;
    for (const key in value) n += countNodes(value[key]);
    return n;
  }
  return 1;
}

/**
 * Copies `value`, leaving every array of more than `budget` nodes empty, and returns the pieces that refill
 * it: each carries elements worth at most `budget` nodes (or one element, itself cut the same way), and a
 * piece never precedes the piece that adds the element its path runs through. Values other than arrays and
 * plain objects are kept as they are.
 */
export function detachLargeArrays(value: unknown, budget: number = NODES_PER_PIECE): DetachedValue {
  const pieces: ArrayPiece[] = [];
  const limit = Math.max(1, budget);
  return { value: detach(value, [], limit, pieces), pieces };
}

function detach(value: unknown, path: ValuePath, budget: number, pieces: ArrayPiece[]): unknown {
  if (Array.isArray(value)) {
    if (countNodes(value) <= budget) return value;
    let items: unknown[] = [];
    let nodes = 0;
    let inner: ArrayPiece[] = [];
    const flush = () => {
      if (items.length === 0) return;
      pieces.push({ path, items }, ...inner);
      items = [];
      inner = [];
      nodes = 0;
    };
    value.forEach((item, index) => {
      const own: ArrayPiece[] = [];
      const cut = detach(item, [...path, index], budget, own);
      const size = countNodes(cut);
      if (nodes > 0 && nodes + size > budget) flush();
      items.push(cut);
      nodes += size;
      // What was cut from this element is refilled after the piece that adds the element.
      for (const piece of own) inner.push(piece);
    });
    flush();
    return [];
  }
  if (isPlainObject(value)) {
    if (countNodes(value) <= budget) return value;
    const copy: Record<string, unknown> = {};
    for (const key in value) copy[key] = detach(value[key], [...path, key], budget, pieces);
    return copy;
  }
  return value;
}

/** Appends a piece's elements to the array at its path in `root` (the value being rebuilt). */
export function attachPiece(root: unknown, piece: ArrayPiece): void {
  let at: unknown = root;
  for (const key of piece.path) at = (at as Record<string | number, unknown>)[key];
  if (!Array.isArray(at)) {
    throw new TypeError(`Config piece path "${piece.path.join(".")}" does not lead to an array`);
  }
  for (const item of piece.items) at.push(item);
}
