/**
 * JSON answers written as their client reads them, a piece at a time, each in a turn of the event loop: a debug
 * answer about every service of a large registry is then built in many short turns instead of one long one, and
 * never held whole. The text is exactly what `jsonResponse` writes for the same value.
 *
 * @module
 */

/** Writes bigints as decimal strings, as every JSON answer of the servers does. */
export function jsonReplacer(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? value.toString() : value;
}

/** Text a piece holds before it is handed on (the last may hold less; one large item, more). */
const PIECE_CHARS = 64 * 1024;

/**
 * An answer whose body is the JSON array of `view(item)` for each of `items`, indented by two; each item is
 * viewed only when the client has read the pieces before it.
 */
export function jsonArrayResponse<T>(
  items: readonly T[],
  view: (item: T) => unknown,
  status = 200,
): Response {
  let index = 0;
  return streamed(status, items.length === 0 ? undefined : "[\n", () => {
    if (index >= items.length) return undefined;
    const value = JSON.stringify(view(items[index]), jsonReplacer, 2) ?? "null";
    index++;
    return `  ${indented(value)}${index < items.length ? "," : ""}\n`;
  }, items.length === 0 ? "[]\n" : "]\n");
}

/**
 * An answer whose body is the JSON object of `key: view(value)` for each of `entries`, indented by two; an
 * entry whose view is undefined is left out, as `JSON.stringify` does. Each is viewed only when the client has
 * read the pieces before it.
 */
export function jsonObjectResponse<T>(
  entries: readonly (readonly [string, T])[],
  view: (value: T) => unknown,
  status = 200,
): Response {
  let index = 0;
  let written = 0;
  return streamed(status, undefined, () => {
    while (index < entries.length) {
      const [key, value] = entries[index++];
      const text = JSON.stringify(view(value), jsonReplacer, 2);
      if (text === undefined) continue;
      return `${written++ === 0 ? "{\n" : ",\n"}  ${JSON.stringify(key)}: ${indented(text)}`;
    }
    return undefined;
  }, () => written === 0 ? "{}\n" : "\n}\n");
}

/** `text` with every line after the first indented one level (two spaces) deeper. */
function indented(text: string): string {
  return text.includes("\n") ? text.replaceAll("\n", "\n  ") : text;
}

/**
 * A JSON answer: `head`, then what `next` gives until it gives undefined, then `tail`, handed on in pieces of
 * about {@link PIECE_CHARS} characters as the client reads.
 */
function streamed(
  status: number,
  head: string | undefined,
  next: () => string | undefined,
  tail: string | (() => string),
): Response {
  const encoder = new TextEncoder();
  let started = false;
  let ended = false;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (ended) return controller.close();
      // A client reading as fast as the pieces come would have them built back to back in one task: each piece
      // after the first waits a turn of the event loop, so other requests (`/ready`) are answered in between.
      if (started) await new Promise((resolve) => setTimeout(resolve, 0));
      let piece = started || head === undefined ? "" : head;
      started = true;
      while (piece.length < PIECE_CHARS) {
        const part = next();
        if (part === undefined) {
          piece += typeof tail === "string" ? tail : tail();
          ended = true;
          break;
        }
        piece += part;
      }
      controller.enqueue(encoder.encode(piece));
    },
  }, { highWaterMark: 0 });
  return new Response(body, { status, headers: { "content-type": "application/json" } });
}
