/**
 * An encoded resource with its incremental-xDS version: a digest of the bytes, so equal bytes always have the
 * same version across pushes, restarts and control-plane replicas.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { encodeDeltaResource } from "@mesh/proto/discovery_frame";

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

/** Names a membership test can read: a set of names, or a map keyed by them. */
export type NameLookup = ReadonlySet<string> | ReadonlyMap<string, unknown>;

/** True when two resources are the same: the very object (a cache hit), or equal names and bytes. */
export function sameResource(a: VersionedResource, b: VersionedResource): boolean {
  if (a === b) return true;
  if (a.name !== b.name || a.encoded.length !== b.encoded.length) return false;
  return Buffer.from(a.encoded.buffer, a.encoded.byteOffset, a.encoded.byteLength).equals(b.encoded);
}
