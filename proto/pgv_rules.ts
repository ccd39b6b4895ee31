/**
 * Reads protoc-gen-validate options (`validate/validate.proto`) from a protobufjs schema.
 *
 * protobufjs keeps each option twice after parsing a `.proto` file:
 * - `parsedOptions`: a list of `{ "(validate.rules)": { string: { min_len: 1 } } }` entries, one per option
 *   statement, with aggregate values as nested objects and repeated keys (`in: "a" in: "b"`) as arrays;
 * - `options`: a flat map such as `{ "(validate.rules).string.min_len": 1 }` where a repeated key keeps only
 *   its last value.
 * A schema built from JSON (`Root.fromJSON`) may carry only the flat map, or the nested object under the
 * plain `(validate.rules)` key. `parsedOptions` is preferred; the flat map is the fallback.
 *
 * @module
 */
import type protobuf from "protobufjs";

/** A PGV rules object in the shape of `validate.FieldRules`, e.g. `{ uint32: { lte: 65535 } }`. */
export type PgvRules = { readonly [key: string]: unknown };

const RULES = "(validate.rules)";
const REQUIRED = "(validate.required)";

type Loose = Record<string, unknown>;

function isObject(value: unknown): value is Loose {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Merges `source` into `target`; a key given twice becomes a list, as for repeated rule fields. */
function mergeInto(target: Loose, source: Loose): void {
  for (const [key, value] of Object.entries(source)) {
    const existing = target[key];
    if (existing === undefined) {
      target[key] = isObject(value) ? structuredClone(value) : value;
    } else if (isObject(existing) && isObject(value)) {
      mergeInto(existing, value);
    } else {
      target[key] = [
        ...(Array.isArray(existing) ? existing : [existing]),
        ...(Array.isArray(value) ? value : [value]),
      ];
    }
  }
}

/** Builds a nested object from flat keys such as `"(validate.rules).string.min_len"`. */
function unflatten(options: Loose, prefix: string): Loose | undefined {
  let found: Loose | undefined;
  for (const [key, value] of Object.entries(options)) {
    if (key === prefix && isObject(value)) {
      found ??= {};
      mergeInto(found, value);
    } else if (key.startsWith(`${prefix}.`)) {
      found ??= {};
      const parts = key.slice(prefix.length + 1).split(".");
      let node = found;
      for (const part of parts.slice(0, -1)) {
        if (!isObject(node[part])) node[part] = {};
        node = node[part] as Loose;
      }
      mergeInto(node, { [parts[parts.length - 1]]: value });
    }
  }
  return found;
}

/** The merged value of one option from an object's parsedOptions, or its flat options as a fallback. */
function optionValue(object: protobuf.ReflectionObject, name: string): unknown {
  const parsed = (object as { parsedOptions?: Loose[] | null }).parsedOptions;
  if (Array.isArray(parsed)) {
    const entries = parsed.filter((entry) => isObject(entry) && Object.hasOwn(entry, name));
    if (entries.length > 0) {
      const values = entries.map((entry) => entry[name]);
      if (!values.every(isObject)) return values[values.length - 1];
      const merged: Loose = {};
      for (const value of values) mergeInto(merged, value as Loose);
      return merged;
    }
  }
  const options = object.options as Loose | undefined;
  if (options === undefined) return undefined;
  if (Object.hasOwn(options, name) && !isObject(options[name])) return options[name];
  return unflatten(options, name);
}

const fieldCache = new WeakMap<protobuf.Field, PgvRules | null>();

/** Returns the `(validate.rules)` of a field, or undefined when it has none. */
export function fieldRules(field: protobuf.Field): PgvRules | undefined {
  let rules = fieldCache.get(field);
  if (rules === undefined) {
    const value = optionValue(field, RULES);
    rules = isObject(value) ? value : null;
    fieldCache.set(field, rules);
  }
  return rules ?? undefined;
}

const requiredCache = new WeakMap<protobuf.OneOf, boolean>();

/** Whether a oneof carries `option (validate.required) = true`. */
export function oneofRequired(oneof: protobuf.OneOf): boolean {
  let required = requiredCache.get(oneof);
  if (required === undefined) {
    required = optionValue(oneof, REQUIRED) === true;
    requiredCache.set(oneof, required);
  }
  return required;
}

const disabledCache = new WeakMap<protobuf.Type, boolean>();

/** Whether a message opts out of validation with `(validate.disabled)` or `(validate.ignored)`. */
export function messageValidationDisabled(type: protobuf.Type): boolean {
  let disabled = disabledCache.get(type);
  if (disabled === undefined) {
    disabled = optionValue(type, "(validate.disabled)") === true ||
      optionValue(type, "(validate.ignored)") === true;
    disabledCache.set(type, disabled);
  }
  return disabled;
}
