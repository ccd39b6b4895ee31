/**
 * The well-known string formats of protoc-gen-validate (`StringRules.well_known`), with the semantics of its
 * reference (Go) implementation.
 *
 * @module
 */
import { isIPv4, isIPv6 } from "node:net";

/** Whether `text` is an IPv4 address in dotted-quad form. */
export function isIpv4Address(text: string): boolean {
  return isIPv4(text);
}

/** Whether `text` is an IPv6 address; zone suffixes (`%eth0`) are not addresses. */
export function isIpv6Address(text: string): boolean {
  return !text.includes("%") && isIPv6(text);
}

/** Whether `text` is a host name: dot-separated labels of 1..63 letters, digits, inner hyphens; ≤253 long. */
export function isHostname(text: string): boolean {
  const host = text.endsWith(".") ? text.slice(0, -1) : text;
  if (host.length === 0 || host.length > 253) return false;
  return host.split(".").every((label) =>
    label.length >= 1 && label.length <= 63 && /^[a-zA-Z0-9-]+$/.test(label) && !label.startsWith("-") &&
    !label.endsWith("-")
  );
}

/** Whether `text` is an e-mail address without display name: `local@hostname`, local part ≤64 bytes. */
export function isEmail(text: string): boolean {
  const at = text.lastIndexOf("@");
  if (at <= 0 || /[\s<>()]/.test(text)) return false;
  const local = text.slice(0, at);
  return new TextEncoder().encode(local).length <= 64 && isHostname(text.slice(at + 1));
}

/** Whether `text` is an absolute URI (it has a scheme). */
export function isUri(text: string): boolean {
  return /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(text) && URL.canParse(text);
}

/** Whether `text` is a URI reference: absolute or relative. */
export function isUriRef(text: string): boolean {
  // deno-lint-ignore no-control-regex -- control characters are exactly what a URI reference may not hold
  return !/[\s\u0000-\u001f\u007f]/.test(text) && URL.canParse(text, "http://base.invalid/");
}

/** Whether `text` is a UUID in the 8-4-4-4-12 hexadecimal form. */
export function isUuid(text: string): boolean {
  return /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(text);
}

// The header patterns PGV compiles for `well_known_regex`. In the name pattern, "+-." is a character range
// (0x2B..0x2E, so "," too) exactly as in PGV's own pattern.
const HEADER_NAME_STRICT = /^:?[0-9a-zA-Z!#$%&'*+-.^_|~`]+$/;
// deno-lint-ignore no-control-regex -- the header patterns exist to reject control characters
const HEADER_VALUE_STRICT = /^[^\u0000-\u0008\u000A-\u001F\u007F]*$/;
// deno-lint-ignore no-control-regex -- as above
const HEADER_LOOSE = /^[^\u0000\u000A\u000D]*$/;

/** Whether `text` matches PGV's `HTTP_HEADER_NAME` pattern (`strict` defaults to true in PGV). */
export function isHttpHeaderName(text: string, strict = true): boolean {
  return (strict ? HEADER_NAME_STRICT : HEADER_LOOSE).test(text);
}

/** Whether `text` matches PGV's `HTTP_HEADER_VALUE` pattern (`strict` defaults to true in PGV). */
export function isHttpHeaderValue(text: string, strict = true): boolean {
  return (strict ? HEADER_VALUE_STRICT : HEADER_LOOSE).test(text);
}
