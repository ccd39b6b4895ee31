/**
 * Caches over protobufjs reflection that make walking large messages cheap.
 *
 * protobufjs computes `fullName` on every read by walking up the namespace tree and joining the names, and
 * `lookup` searches the namespace tree; both dominated profiles of large walks. Names never change once a
 * schema is resolved, and a type once found stays in its root.
 *
 * @module
 */
import protobuf from "protobufjs";

const names = new WeakMap<protobuf.ReflectionObject, string>();

/** The fully qualified name with its leading dot, e.g. `.google.protobuf.Any`. */
export function fullNameOf(object: protobuf.ReflectionObject): string {
  let name = names.get(object);
  if (name === undefined) {
    name = object.fullName;
    names.set(object, name);
  }
  return name;
}

const anyTypes = new WeakMap<protobuf.Root, Map<string, protobuf.Type>>();

/** The message type a type URL names, or undefined when the root has none. */
export function typeForTypeUrl(root: protobuf.Root, typeUrl: string): protobuf.Type | undefined {
  let byUrl = anyTypes.get(root);
  if (byUrl === undefined) {
    byUrl = new Map();
    anyTypes.set(root, byUrl);
  }
  const cached = byUrl.get(typeUrl);
  if (cached !== undefined) return cached;
  const found = root.lookup(typeUrl.slice(typeUrl.lastIndexOf("/") + 1));
  if (!(found instanceof protobuf.Type)) return undefined;
  // Misses are not cached: loadProtoFiles can add files to a root it is given.
  byUrl.set(typeUrl, found);
  return found;
}
