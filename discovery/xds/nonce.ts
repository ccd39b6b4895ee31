/**
 * Response nonces. Unique within the process (a random per-process salt plus a counter), and, with config
 * distribution tracking, prefixed by the push version so an ACK tells which version a proxy applied.
 *
 * @module
 */

const SALT = Array.from(crypto.getRandomValues(new Uint8Array(4)), (b) => b.toString(16).padStart(2, "0"))
  .join("");
let counter = 0;

/** A fresh nonce: `<version>/<unique>` when `version` is given, else `<unique>`. */
export function makeNonce(version?: string): string {
  const unique = `${SALT}${(++counter).toString(36)}`;
  return version === undefined ? unique : `${version}/${unique}`;
}

/** The push version a tracked nonce carries, or undefined for an untracked one. */
export function nonceVersion(nonce: string): string | undefined {
  const slash = nonce.lastIndexOf("/");
  return slash < 0 ? undefined : nonce.slice(0, slash);
}
