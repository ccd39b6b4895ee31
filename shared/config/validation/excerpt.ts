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
const PLAIN_KEY = /^[\x21-\x7e]{1,64}$/;

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

/** An object key as a field path prints it: whole when short and plain, else as a quoted excerpt. */
export function pathKey(key: string): string {
  return PLAIN_KEY.test(key) ? key : quoteExcerpt(key);
}
