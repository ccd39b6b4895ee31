/**
 * Response nonces. Unique within the server that makes them (a random salt per source plus a counter, so two
 * servers in one process never share one either), and, with config distribution tracking, prefixed by the
 * push version so an ACK tells which version a proxy applied.
 *
 * @module
 */

/** Makes the nonces of one server. */
export class NonceSource {
  readonly #salt = Array.from(
    crypto.getRandomValues(new Uint8Array(4)),
    (b) => b.toString(16).padStart(2, "0"),
  )
    .join("");
  #counter = 0;

  /** A fresh nonce: `<version>/<unique>` when `version` is given, else `<unique>`. */
  make(version?: string): string {
    const unique = `${this.#salt}${(++this.#counter).toString(36)}`;
    return version === undefined ? unique : `${version}/${unique}`;
  }

  /** How many nonces it made, for `/debug/cachez`. */
  get made(): number {
    return this.#counter;
  }
}

/** The push version a tracked nonce carries, or undefined for an untracked one. */
export function nonceVersion(nonce: string): string | undefined {
  const slash = nonce.lastIndexOf("/");
  return slash < 0 ? undefined : nonce.slice(0, slash);
}
