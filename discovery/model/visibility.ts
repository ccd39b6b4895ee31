/**
 * exportTo semantics shared by services, virtual services and destination rules: after normalization a list
 * holds namespace names, `*` (every namespace) or `~` (no namespace); `.` has become the owner's namespace.
 */

/** Normalizes an exportTo list: `.` becomes `namespace`, duplicates go, an empty list means `*`. */
export function normalizeExportTo(entries: readonly string[], namespace: string): readonly string[] {
  if (entries.length === 0) return Object.freeze(["*"]);
  return Object.freeze([...new Set(entries.map((e) => e === "." ? namespace : e))].sort());
}

/** True when a normalized exportTo list makes its resource visible from `namespace`. */
export function exportedTo(exportTo: readonly string[], namespace: string): boolean {
  return exportTo.includes("*") || exportTo.includes(namespace);
}

/** True when some namespace sees both normalized exportTo lists (their resources can conflict). */
export function exportToOverlaps(a: readonly string[], b: readonly string[]): boolean {
  if (a.includes("~") || b.includes("~")) return false;
  if (a.includes("*") || b.includes("*")) return true;
  return a.some((ns) => b.includes(ns));
}

/**
 * The namespaces a normalized exportTo list singles out: those it names when it does not export to every
 * namespace. A namespace not singled out by any list sees exactly what every other such namespace sees.
 */
export function namespacesSingledOut(exportTo: readonly string[]): readonly string[] {
  return exportTo.includes("*") ? [] : exportTo.filter((ns) => ns !== "~");
}
