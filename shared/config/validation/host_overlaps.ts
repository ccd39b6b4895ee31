/**
 * Which hosts of a list overlap an earlier one, in time proportional to the list's characters (and a sort),
 * not to the square of its length: a VirtualService's hosts were compared pair by pair, and every overlapping
 * pair was an error, so 6,000 copies of one host were 18 million errors, which exhausted the heap.
 *
 * Two hosts overlap when they are equal or a wildcard covers the other (`hostsMatch`). Written backwards, the
 * name after a wildcard's `*` is then a prefix of the other host: among the reversed names sorted, the names a
 * wildcard covers follow it, in one run.
 *
 * @module
 */

/** One host of the list: its name after any leading `*`, reversed, and where it stands. */
interface Entry {
  readonly key: string;
  readonly wildcard: boolean;
  readonly index: number;
}

/** A wildcard whose reversed name is a prefix of the entries being scanned. */
interface Open {
  readonly entry: Entry;
  /** The smallest index among this wildcard and the ones under it on the stack. */
  readonly ancestorsMin: number;
  /** The smallest index among the entries scanned since it was opened: the hosts it covers. */
  coveredMin: number;
}

/**
 * For each host, the index of the first earlier host it overlaps, or undefined: what comparing every pair
 * finds, as one answer per host. Hosts are names or IP addresses, a name possibly starting with `*`.
 */
export function earliestOverlaps(hosts: readonly string[]): (number | undefined)[] {
  const entries: Entry[] = hosts.map((host, index) => {
    const wildcard = host.startsWith("*");
    return { key: [...(wildcard ? host.slice(1) : host)].reverse().join(""), wildcard, index };
  });
  const sorted = [...entries].sort((a, b) => a.key < b.key ? -1 : a.key > b.key ? 1 : a.index - b.index);
  const earliest: (number | undefined)[] = new Array(hosts.length).fill(undefined);
  const overlaps = (index: number, other: number) => {
    if (other < index && (earliest[index] === undefined || other < earliest[index]!)) earliest[index] = other;
  };
  // Equal names overlap whatever their wildcards; the first of a run of equals has the smallest index.
  for (let start = 0; start < sorted.length;) {
    let end = start + 1;
    while (end < sorted.length && sorted[end].key === sorted[start].key) {
      overlaps(sorted[end++].index, sorted[start].index);
    }
    start = end;
  }
  // The open wildcards are exactly those whose reversed names are prefixes of the entry scanned, each a
  // prefix of the next: a name they cover sorts after them, and so does everything between.
  const open: Open[] = [];
  const close = () => {
    const done = open.pop()!;
    overlaps(done.entry.index, done.coveredMin);
    const parent = open.at(-1);
    if (parent !== undefined) {
      parent.coveredMin = Math.min(parent.coveredMin, done.coveredMin, done.entry.index);
    }
  };
  for (const entry of sorted) {
    while (open.length > 0 && !entry.key.startsWith(open.at(-1)!.entry.key)) close();
    const top = open.at(-1);
    if (top !== undefined) {
      overlaps(entry.index, top.ancestorsMin);
      top.coveredMin = Math.min(top.coveredMin, entry.index);
    }
    if (entry.wildcard) {
      open.push({
        entry,
        ancestorsMin: Math.min(entry.index, top?.ancestorsMin ?? Infinity),
        coveredMin: Infinity,
      });
    }
  }
  while (open.length > 0) close();
  return earliest;
}
