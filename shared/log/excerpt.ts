/**
 * Text a peer sent, as a log line or an error message may quote it: control characters and quotes escaped,
 * cut to a length, so a peer can neither forge lines nor make one line megabytes long.
 *
 * @module
 */

/** `text` cut to its first `max` characters, "…" marking a cut; for text that is escaped later (JSON). */
export function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** `text` escaped as inside a JSON string and cut to its first `max` characters, "…" marking a cut. */
export function excerpt(text: string, max = 120): string {
  const shortened = text.length > max;
  const escaped = JSON.stringify(shortened ? text.slice(0, max) : text).slice(1, -1);
  return shortened ? `${escaped}…` : escaped;
}
