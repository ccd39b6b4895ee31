/** True when every key of `selector` is in `labels` with the same value; an empty selector matches all. */
export function selectorMatches(
  selector: Readonly<Record<string, string>> | undefined,
  labels: Readonly<Record<string, string>>,
): boolean {
  if (!selector) return true;
  for (const [key, value] of Object.entries(selector)) {
    if (labels[key] !== value) return false;
  }
  return true;
}

/** True when the selector has no labels (selects everything in its scope). */
export function selectorIsEmpty(selector: Readonly<Record<string, string>> | undefined): boolean {
  return !selector || Object.keys(selector).length === 0;
}
