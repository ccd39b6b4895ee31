import { type Document, isMap, isScalar, isSeq, type LineCounter } from "yaml";

const SEGMENT = /([^.[\]"]+)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/g;

/** Splits an issue path (`spec.http[0].match["x.y"]`) into keys and indexes. */
export function splitPath(path: string): (string | number)[] {
  const out: (string | number)[] = [];
  for (const m of path.matchAll(SEGMENT)) {
    if (m[1] !== undefined) out.push(m[1]);
    else if (m[2] !== undefined) out.push(Number(m[2]));
    else out.push(JSON.parse(m[3]) as string);
  }
  return out;
}

/**
 * Returns a resolver from issue paths to 1-based lines in the YAML source of `doc` (parsed with
 * `lineCounter`). A path that leads to a missing field resolves to its deepest existing parent, so an
 * error like "spec.hosts: is required" points at `spec:`; map entries point at their key's line.
 */
export function yamlLineResolver(
  doc: Document,
  lineCounter: LineCounter,
): (path: string) => number | undefined {
  return (path: string) => {
    let node: unknown = doc.contents;
    let offset = doc.contents?.range?.[0];
    for (const segment of splitPath(path)) {
      let next: unknown;
      let at: number | undefined;
      if (typeof segment === "number" && isSeq(node)) {
        next = node.items[segment];
        at = (next as { range?: [number] } | undefined)?.range?.[0];
      } else if (typeof segment === "string" && isMap(node)) {
        const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === segment);
        // Map entries point at their key line (`route:`), not at the first line of a block value.
        next = pair?.value;
        at = isScalar(pair?.key) ? pair.key.range?.[0] : undefined;
      }
      if (at === undefined) break;
      offset = at;
      node = next;
    }
    return offset === undefined ? undefined : lineCounter.linePos(offset).line;
  };
}
