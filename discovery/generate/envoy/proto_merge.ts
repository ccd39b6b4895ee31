/**
 * Protobuf merge semantics on the plain-object form our generators build (`.proto` field names, Anys as
 * `{ "@type", ...fields }`): repeated fields append, map entries replace by key, messages merge field by field,
 * scalars replace unless they hold their default (proto3: unset; so a wrapper's `false` or a Duration's zero
 * nanos leave the base as it was, as in the reference), and setting one member of a oneof clears the others. This is what an EnvoyFilter MERGE does
 * to the generated object.
 *
 * @module
 */
import type protobuf from "protobufjs";
import { messageTypeForUrl } from "@mesh/proto/any_codec";
import { fromProtoJson } from "@mesh/proto/proto_json";

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

function anyType(value: Obj, root: protobuf.Root): protobuf.Type | undefined {
  if (typeof value["@type"] !== "string") return undefined;
  try {
    return messageTypeForUrl(value["@type"], root);
  } catch {
    return undefined;
  }
}

function mergeValue(field: protobuf.Field, base: unknown, patch: unknown, root: protobuf.Root): unknown {
  if (field.map) return isObj(base) && isObj(patch) ? { ...base, ...patch } : patch;
  if (field.repeated) return Array.isArray(base) && Array.isArray(patch) ? [...base, ...patch] : patch;
  const type = field.resolve().resolvedType;
  if (type === null || !("fields" in type) || !isObj(base) || !isObj(patch)) return patch;
  return mergeInto(type as protobuf.Type, base, patch, root);
}

function isDefaultScalar(field: protobuf.Field, value: unknown): boolean {
  if (field.repeated || field.map) return false;
  const type = field.resolve().resolvedType;
  if (type !== null && "fields" in type) return false;
  if (type !== null && "values" in type) {
    const values = (type as protobuf.Enum).values;
    return value === 0 || (typeof value === "string" && values[value] === 0);
  }
  return value === 0 || value === "0" || value === "" || value === false;
}

/**
 * `patch` merged into `base` (neither changed) as protobuf's `Merge` does for message `type`. An Any merges
 * only into an Any of the same type URL; otherwise the patch replaces it.
 */
export function mergeInto(type: protobuf.Type, base: Obj, patch: Obj, root: protobuf.Root): Obj {
  if (type.fullName === ".google.protobuf.Any") {
    if (base["@type"] !== patch["@type"]) return patch;
    const inner = anyType(patch, root);
    if (inner === undefined) return patch;
    const { "@type": url, ...rest } = patch;
    const { "@type": _, ...own } = base;
    return { "@type": url, ...mergeInto(inner, own, rest, root) };
  }
  // Struct and the wrappers and Duration are messages too: their object forms merge field by field alike.
  const out: Obj = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    const field = type.fields[key];
    if (field === undefined) {
      out[key] = value;
      continue;
    }
    if (field.partOf !== null) {
      for (const sibling of field.partOf.oneof) if (sibling !== key) delete out[sibling];
    } else if (isDefaultScalar(field, value)) {
      // A proto3 scalar without presence holding its default is unset: merging it changes nothing.
      continue;
    }
    out[key] = key in base ? mergeValue(field, base[key], value, root) : value;
  }
  return out;
}

/** An EnvoyFilter patch value (proto3 JSON of message `type`) in the object form, with `.proto` field names. */
export function patchObject(type: protobuf.Type, value: unknown, root: protobuf.Root): Obj {
  return snakeCase(type, fromProtoJson(type, value, root), root) as Obj;
}

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

// proto3 JSON allows lowerCamelCase names; the encoder and the merge above key fields by their `.proto` names.
function snakeCase(type: protobuf.Type, value: unknown, root: protobuf.Root): unknown {
  if (!isObj(value)) return value;
  if (type.fullName === ".google.protobuf.Struct" || type.fullName === ".google.protobuf.Value") return value;
  if (type.fullName === ".google.protobuf.Any") {
    const inner = anyType(value, root);
    if (inner === undefined) return value;
    const { "@type": url, ...rest } = value;
    return { "@type": url, ...(snakeCase(inner, rest, root) as Obj) };
  }
  const out: Obj = {};
  for (const [key, raw] of Object.entries(value)) {
    const field = type.fields[key] ?? type.fields[snake(key)];
    const name = field?.name ?? key;
    const resolved = field?.resolve().resolvedType;
    const sub = resolved && "fields" in resolved ? resolved as protobuf.Type : undefined;
    if (sub === undefined || field === undefined) out[name] = raw;
    else if (field.map && isObj(raw)) {
      out[name] = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, snakeCase(sub, v, root)]));
    } else if (field.repeated && Array.isArray(raw)) out[name] = raw.map((v) => snakeCase(sub, v, root));
    else out[name] = snakeCase(sub, raw, root);
  }
  return out;
}
