/**
 * Quoting input back in error messages. A config error is logged and shown in `/debug/configz`; a file that
 * is not config at all (a link to `/etc/shadow`) must not have its content copied there, so input is quoted
 * only as a short excerpt with everything but printable ASCII escaped.
 *
 * @module
 */

/** Most characters of input one message quotes. */
export const EXCERPT_CHARS = 32;

/** Longest object key printed whole in a field path; a longer or odd one is printed as an excerpt. */
const PLAIN_KEY_CHARS = 64;

/** `text` in double quotes, cut after `max` characters (then followed by `…`), non-printable ASCII escaped. */
export function quoteExcerpt(text: string, max = EXCERPT_CHARS): string {
  const chars = [...text];
  const cut = chars.length > max ? chars.slice(0, max).join("") : text;
  const escaped = cut.replace(/[^\x20-\x7e]|["\\]/g, (c) => {
    if (c === '"' || c === "\\") return `\\${c}`;
    return `\\u{${c.codePointAt(0)!.toString(16)}}`;
  });
  return `"${escaped}"${chars.length > max ? "…" : ""}`;
}

/**
 * An object key (or a name) as a message prints it: whole when it is printable ASCII of at most `maxPlain`
 * characters, else as a quoted excerpt.
 */
export function pathKey(key: string, maxPlain = PLAIN_KEY_CHARS): string {
  const plain = key.length >= 1 && key.length <= maxPlain && /^[\x21-\x7e]+$/.test(key);
  return plain ? key : quoteExcerpt(key);
}
