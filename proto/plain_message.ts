/**
 * Converts a decoded protobufjs message into a plain object with the `.proto` field names, turning every
 * `google.protobuf.Struct`, `Value` and `ListValue` into plain JSON on the way.
 *
 * @module
 */
import protobuf from "protobufjs";
import { fullNameOf } from "./_reflection_cache.ts";
import { listToJson, structToJson, valueToJson } from "./struct_json.ts";

const LONG_TYPES = new Set(["int64", "uint64", "sint64", "fixed64", "sfixed64"]);

type Loose = Record<string, unknown>;

function scalarToPlain(field: protobuf.Field, value: unknown): unknown {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Enum) {
    return resolved.valuesById[value as number] ?? value;
  }
  // 64-bit integers are decimal strings so no precision is lost; protobufjs yields a Long or a number.
  if (LONG_TYPES.has(field.type)) return String(value);
  return value;
}

function fieldValueToPlain(field: protobuf.Field, value: unknown, depth: number): unknown {
  const resolved = field.resolvedType;
  if (!(resolved instanceof protobuf.Type)) return scalarToPlain(field, value);
  switch (fullNameOf(resolved)) {
    case ".google.protobuf.Struct":
      return structToJson(value);
    case ".google.protobuf.Value":
      return valueToJson(value);
    case ".google.protobuf.ListValue":
      return listToJson(value);
    default:
      return toPlain(resolved, value as Loose, depth + 1);
  }
}

function toPlain(type: protobuf.Type, message: Loose, depth: number): Loose {
  if (depth > protobuf.util.recursionLimit) {
    throw new RangeError(
      `Message ${type.fullName.slice(1)} is nested deeper than ${protobuf.util.recursionLimit}`,
    );
  }
  const out: Loose = {};
  for (const field of type.fieldsArray) {
    const name = field.name;
    const value = message[name];
    // Oneof members (including proto3 `optional`) are set only as own properties; unset ones are left out.
    if (field.partOf && (!Object.hasOwn(message, name) || value === null || value === undefined)) continue;
    if (field instanceof protobuf.MapField) {
      const entries: Loose = {};
      for (const [key, item] of Object.entries((value ?? {}) as Loose)) {
        entries[key] = fieldValueToPlain(field, item, depth);
      }
      out[name] = entries;
    } else if (field.repeated) {
      out[name] = ((value ?? []) as unknown[]).map((item) => fieldValueToPlain(field, item, depth));
    } else if (field.resolvedType instanceof protobuf.Type) {
      if (value !== null && value !== undefined) out[name] = fieldValueToPlain(field, value, depth);
    } else {
      out[name] = scalarToPlain(field, value);
    }
  }
  return out;
}

/**
 * Converts a decoded message to a plain object.
 *
 * Scalars are always present (proto3 defaults included), enums are names (numbers when unknown), 64-bit
 * integers are decimal strings, bytes stay `Uint8Array`, unset message fields and oneof members are absent,
 * and Struct/Value/ListValue fields are plain JSON. Any fields stay `{type_url, value}`.
 */
export function messageToPlain(type: protobuf.Type, message: protobuf.Message): Record<string, unknown> {
  return toPlain(type, message as unknown as Loose, 0);
}
