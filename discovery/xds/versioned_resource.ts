/**
 * An encoded resource with its incremental-xDS version: a digest of the bytes, so equal bytes always have the
 * same version across pushes, restarts and control-plane replicas.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { encodeDeltaResource } from "../../proto/discovery_frame.ts";

/** The version of an encoded resource: 96 bits of its SHA-256, base64url (16 characters). */
export function resourceVersion(encoded: Uint8Array): string {
  return createHash("sha256").update(encoded).digest("base64url").slice(0, 16);
}

/** A named resource as `google.protobuf.Any` bytes; the version is computed on first use and kept. */
export class VersionedResource {
  #version: string | undefined;
  #deltaResource: Uint8Array | undefined;

  /** `name` is the resource's name; `encoded` the bytes of its `google.protobuf.Any`. */
  constructor(readonly name: string, readonly encoded: Uint8Array) {}

  /** `resourceVersion(encoded)`, computed once. */
  get version(): string {
    return this.#version ??= resourceVersion(this.encoded);
  }

  /**
   * The resource as an incremental-xDS `Resource` message (name, version, bytes), encoded on first use and
   * kept: every delta proxy that gets this resource is sent these same bytes.
   */
  get deltaResource(): Uint8Array {
    return this.#deltaResource ??= encodeDeltaResource({
      name: this.name,
      version: this.version,
      resource: this.encoded,
    });
  }
}

/**
 * True when two generations are the same resources in the same order: the very objects (a cache hit), or
 * equal names and bytes (rebuilt alike).
 */
export function sameResources(a: readonly VersionedResource[], b: readonly VersionedResource[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i], y = b[i];
    if (x === y) continue;
    if (x.name !== y.name || x.encoded.length !== y.encoded.length) return false;
    if (!Buffer.from(x.encoded.buffer, x.encoded.byteOffset, x.encoded.byteLength).equals(y.encoded)) {
      return false;
    }
  }
  return true;
}
