/**
 * Converts between plain JSON and the object shape of `google.protobuf.Struct` that protobufjs expects.
 *
 * protobufjs bundles its own `google.protobuf.Value` whose fields are camelCase (`nullValue`, `numberValue`,
 * `stringValue`, `boolValue`, `structValue`, `listValue`) even when the schema is loaded with `keepCase`.
 * Writing `string_value` makes `fromObject` drop the value without an error, so build Structs only here.
 * Field numbers match the official `struct.proto`, so the bytes are the same as any other implementation's.
 *
 * @module
 */

/** A JSON value as `JSON.parse` returns it. */
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
/** A JSON object. */
export interface JsonObject {
  /** A member. */
  [key: string]: JsonValue;
}

/** The protobufjs object form of `google.protobuf.Value`: exactly one key is set. */
export interface ValueObject {
  /** JSON null. */
  nullValue?: 0;
  /** A JSON number (a double). */
  numberValue?: number;
  /** A JSON string. */
  stringValue?: string;
  /** A JSON boolean. */
  boolValue?: boolean;
  /** A JSON object. */
  structValue?: StructObject;
  /** A JSON array. */
  listValue?: { values: ValueObject[] };
}

/** The protobufjs object form of `google.protobuf.Struct`. */
export interface StructObject {
  /** The members by name. */
  fields: Record<string, ValueObject>;
}

/**
 * Converts a JSON value to the protobufjs object form of `google.protobuf.Value`.
 *
 * @throws {TypeError} for numbers that JSON cannot carry (NaN, ±Infinity) and for non-JSON values
 */
export function jsonToValue(value: JsonValue, path = "value"): ValueObject {
  if (value === null) return { nullValue: 0 };
  switch (typeof value) {
    case "boolean":
      return { boolValue: value };
    case "string":
      return { stringValue: value };
    case "number":
      if (!Number.isFinite(value)) {
        throw new TypeError(
          `Cannot put ${value} at ${path} into a google.protobuf.Value: expected a finite number`,
        );
      }
      return { numberValue: value };
    case "object":
      if (Array.isArray(value)) {
        return { listValue: { values: value.map((item, i) => jsonToValue(item, `${path}[${i}]`)) } };
      }
      return { structValue: jsonToStruct(value, path) };
    default:
      throw new TypeError(
        `Cannot put a ${typeof value} at ${path} into a google.protobuf.Value: expected null, boolean, number, ` +
          `string, array or object`,
      );
  }
}

/** Converts a JSON object to the protobufjs object form of `google.protobuf.Struct`. */
export function jsonToStruct(object: JsonObject, path = "struct"): StructObject {
  if (object === null || typeof object !== "object" || Array.isArray(object)) {
    throw new TypeError(`Cannot make a google.protobuf.Struct from ${path}: expected a JSON object`);
  }
  const fields: Record<string, ValueObject> = {};
  for (const [key, item] of Object.entries(object)) {
    // undefined is not JSON; JSON.stringify drops such keys, and so do we.
    if (item !== undefined) fields[key] = jsonToValue(item, `${path}.${key}`);
  }
  return { fields };
}

type Loose = Record<string, unknown>;

/**
 * Reads a Value kind by its camelCase name, or the snake_case name that hand-written objects may use.
 * Only own properties count: a decoded protobufjs message inherits defaults ("" for `stringValue`) from its
 * prototype for the kinds that are not set.
 */
function kindOf(value: Loose, camel: string, snake: string): unknown {
  for (const key of [camel, snake]) {
    if (Object.hasOwn(value, key) && value[key] !== undefined && value[key] !== null) return value[key];
  }
  return undefined;
}

/**
 * Converts a decoded `google.protobuf.Value` (a protobufjs message or its object form) to plain JSON.
 * A Value with no kind set, which the protocol does not allow, becomes `null`.
 */
export function valueToJson(value: unknown): JsonValue {
  if (value === null || typeof value !== "object") return null;
  const v = value as Loose;
  const str = kindOf(v, "stringValue", "string_value");
  if (str !== undefined) return String(str);
  const num = kindOf(v, "numberValue", "number_value");
  if (num !== undefined) return Number(num);
  const bool = kindOf(v, "boolValue", "bool_value");
  if (bool !== undefined) return Boolean(bool);
  const struct = kindOf(v, "structValue", "struct_value");
  if (struct !== undefined) return structToJson(struct);
  const list = kindOf(v, "listValue", "list_value");
  if (list !== undefined) return listToJson(list);
  return null;
}

/** Converts a decoded `google.protobuf.ListValue` to a JSON array. */
export function listToJson(list: unknown): JsonValue[] {
  const values = (list as Loose | null)?.values;
  return Array.isArray(values) ? values.map(valueToJson) : [];
}

/** Converts a decoded `google.protobuf.Struct` (a protobufjs message or its object form) to a JSON object. */
export function structToJson(struct: unknown): JsonObject {
  const fields = (struct as Loose | null)?.fields;
  const out: JsonObject = {};
  if (fields === null || typeof fields !== "object") return out;
  for (const [key, value] of Object.entries(fields as Loose)) out[key] = valueToJson(value);
  return out;
}
