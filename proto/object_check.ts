/**
 * Checks a plain object against a protobufjs message type before `Type.fromObject` sees it.
 *
 * `Type.verify` is not enough for generated Envoy resources: it rejects enum names that `fromObject` accepts,
 * ignores unknown keys (so a typo or a snake_case `google.protobuf.Value` key is silently dropped), wraps
 * out-of-range integers, does not look inside `{"@type": ...}` Any objects, and reports paths without array
 * indices. This check accepts exactly the forms `fromObject` converts faithfully and reports every problem
 * with a full path such as `Cluster.load_assignment.endpoints[0].lb_endpoints[1].endpoint`.
 *
 * @module
 */
import protobuf from "protobufjs";
import { fullNameOf, typeForTypeUrl } from "./_reflection_cache.ts";

/** At most this many problems are reported; the rest are summarised. */
const MAX_PROBLEMS = 20;

const INT32 = { min: -(2 ** 31), max: 2 ** 31 - 1 };
const UINT32 = { min: 0, max: 2 ** 32 - 1 };
const INT64 = { min: -(2n ** 63n), max: 2n ** 63n - 1n };
const UINT64 = { min: 0n, max: 2n ** 64n - 1n };

/** Short, quoted rendering of a value for an error message. */
function show(value: unknown): string {
  if (typeof value === "bigint") return `${value}n`;
  if (value instanceof Uint8Array) return `${value.length} bytes`;
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function snakeToCamel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

function camelToSnake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** The last component of a fully qualified name: `.envoy.config.cluster.v3.Cluster` → `Cluster`. */
export function shortName(fullName: string): string {
  return fullName.slice(fullName.lastIndexOf(".") + 1);
}

/** One way an object does not fit its message type. */
export interface SchemaProblem {
  /** Where, e.g. `Cluster.load_assignment.endpoints[0].lb_endpoints[1].endpoint`. */
  readonly path: string;
  /** What is wrong and what is expected. */
  readonly message: string;
}

class Collector {
  readonly problems: SchemaProblem[] = [];
  dropped = 0;
  add(path: string, message: string): void {
    if (this.problems.length < MAX_PROBLEMS) this.problems.push({ path, message });
    else this.dropped++;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value) &&
    !(value instanceof Uint8Array);
}

function checkInt64(value: unknown, unsigned: boolean): string | undefined {
  const range = unsigned ? UINT64 : INT64;
  const expected = `${unsigned ? "uint64" : "int64"} (an integer or a decimal string)`;
  let big: bigint;
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) {
      return `expected ${expected} within ±2^53 when given as a number, got ${show(value)}`;
    }
    big = BigInt(value);
  } else if (typeof value === "string") {
    if (!/^-?\d+$/.test(value)) return `expected ${expected}, got ${show(value)}`;
    big = BigInt(value);
  } else if (isPlainObject(value) && typeof value.low === "number" && typeof value.high === "number") {
    return undefined; // A Long, already range-checked by construction.
  } else {
    // protobufjs turns a bigint into 0 without an error, so it is rejected here.
    return `expected ${expected}, got ${
      typeof value === "bigint" ? "a bigint (pass a decimal string)" : show(value)
    }`;
  }
  return big < range.min || big > range.max
    ? `expected ${expected} in ${range.min}..${range.max}, got ${value}`
    : undefined;
}

function checkScalar(type: string, value: unknown): string | undefined {
  switch (type) {
    case "double":
    case "float":
      // toObject({json: true}) writes non-finite numbers as these strings and fromObject reads them back.
      if (typeof value === "number" || value === "NaN" || value === "Infinity" || value === "-Infinity") {
        return undefined;
      }
      return `expected ${type} (a number), got ${show(value)}`;
    case "int32":
    case "sint32":
    case "sfixed32":
    case "uint32":
    case "fixed32": {
      const range = type === "uint32" || type === "fixed32" ? UINT32 : INT32;
      if (typeof value === "number" && Number.isInteger(value) && value >= range.min && value <= range.max) {
        return undefined;
      }
      return `expected ${type} (an integer in ${range.min}..${range.max}), got ${show(value)}`;
    }
    case "int64":
    case "sint64":
    case "sfixed64":
      return checkInt64(value, false);
    case "uint64":
    case "fixed64":
      return checkInt64(value, true);
    case "bool":
      return typeof value === "boolean" ? undefined : `expected bool, got ${show(value)}`;
    case "string":
      return typeof value === "string" ? undefined : `expected string, got ${show(value)}`;
    case "bytes":
      return value instanceof Uint8Array || typeof value === "string"
        ? undefined
        : `expected bytes (a Uint8Array or a base64 string), got ${show(value)}`;
    default:
      return `cannot check values of type "${type}"`;
  }
}

function checkEnum(enumType: protobuf.Enum, value: unknown): string | undefined {
  if (typeof value === "string") {
    if (Object.hasOwn(enumType.values, value)) return undefined;
    return `expected a value of enum ${shortName(enumType.fullName)} (${
      Object.keys(enumType.values).join(", ")
    }), ` +
      `got ${show(value)}`;
  }
  if (typeof value === "number" && Number.isInteger(value) && value >= INT32.min && value <= INT32.max) {
    return undefined;
  }
  return `expected a name or number of enum ${shortName(enumType.fullName)}, got ${show(value)}`;
}

function checkFieldValue(
  field: protobuf.Field,
  value: unknown,
  path: string,
  out: Collector,
  depth: number,
): void {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type) return checkMessage(resolved, value, path, out, depth + 1);
  const problem = resolved instanceof protobuf.Enum
    ? checkEnum(resolved, value)
    : checkScalar(field.type, value);
  if (problem !== undefined) out.add(path, problem);
}

function checkMapKey(keyType: string, key: string): string | undefined {
  if (keyType === "string") return undefined;
  if (keyType === "bool") return key === "true" || key === "false" ? undefined : `expected a bool map key`;
  const numeric = /^-?\d+$/.test(key) ? (keyType.endsWith("64") ? key : Number(key)) : key;
  return checkScalar(keyType, numeric);
}

function unknownKeyProblem(type: protobuf.Type, key: string): string {
  const where = `unknown field of ${type.fullName.slice(1)}`;
  const camel = snakeToCamel(key);
  if (camel !== key && type.fields[camel]) {
    return `${where}; protobufjs's bundled ${
      shortName(type.fullName)
    } names it "${camel}" (build Structs with jsonToStruct)`;
  }
  const snake = camelToSnake(key);
  if (snake !== key && type.fields[snake]) {
    return `${where}; the schema keeps the .proto names, use "${snake}"`;
  }
  return where;
}

function checkAnyObject(
  anyType: protobuf.Type,
  object: Record<string, unknown>,
  path: string,
  out: Collector,
  depth: number,
) {
  const typeUrl = object["@type"];
  if (typeof typeUrl !== "string") {
    out.add(path, `expected "@type" to be a type URL string, got ${show(typeUrl)}`);
    return;
  }
  const inner = typeForTypeUrl(anyType.root as protobuf.Root, typeUrl);
  if (inner === undefined) {
    out.add(path, `type URL "${typeUrl}" names no message type in the loaded schema`);
    return;
  }
  const { "@type": _ignored, ...fields } = object;
  checkMessage(inner, fields, `${path}(${shortName(fullNameOf(inner))})`, out, depth + 1);
}

function checkMessage(
  type: protobuf.Type,
  value: unknown,
  path: string,
  out: Collector,
  depth: number,
): void {
  if (depth > protobuf.util.recursionLimit) {
    out.add(path, `nested deeper than ${protobuf.util.recursionLimit} messages`);
    return;
  }
  if (value instanceof protobuf.Message) {
    // fromObject passes message instances through unchanged; they are checked by construction.
    if ((value as protobuf.Message & { $type?: protobuf.Type }).$type === type) return;
  }
  if (!isPlainObject(value)) {
    out.add(path, `expected an object for message ${type.fullName.slice(1)}, got ${show(value)}`);
    return;
  }
  if (fullNameOf(type) === ".google.protobuf.Any" && Object.hasOwn(value, "@type")) {
    return checkAnyObject(type, value, path, out, depth);
  }
  const oneofMembers = new Map<string, string[]>();
  for (const [key, item] of Object.entries(value)) {
    const field = type.fields[key];
    if (field === undefined) {
      // toObject({oneofs: true}) adds the oneof's name holding the set member's name; fromObject ignores it.
      if (type.oneofs?.[key] !== undefined && (typeof item === "string" || item === undefined)) continue;
      out.add(`${path}.${key}`, unknownKeyProblem(type, key));
      continue;
    }
    if (item === undefined || item === null) continue;
    const fieldPath = `${path}.${key}`;
    if (field.partOf) {
      const members = oneofMembers.get(field.partOf.name) ?? [];
      members.push(key);
      oneofMembers.set(field.partOf.name, members);
    }
    if (field instanceof protobuf.MapField) {
      if (!isPlainObject(item)) {
        out.add(fieldPath, `expected an object for map<${field.keyType}, ${field.type}>, got ${show(item)}`);
        continue;
      }
      for (const [mapKey, mapValue] of Object.entries(item)) {
        const entryPath = `${fieldPath}[${JSON.stringify(mapKey)}]`;
        const keyProblem = checkMapKey(field.keyType, mapKey);
        if (keyProblem !== undefined) out.add(entryPath, keyProblem);
        checkFieldValue(field, mapValue, entryPath, out, depth);
      }
    } else if (field.repeated) {
      if (!Array.isArray(item)) {
        out.add(fieldPath, `expected an array for repeated ${field.type}, got ${show(item)}`);
        continue;
      }
      item.forEach((element, i) => checkFieldValue(field, element, `${fieldPath}[${i}]`, out, depth));
    } else {
      checkFieldValue(field, item, fieldPath, out, depth);
    }
  }
  for (const [oneof, members] of oneofMembers) {
    if (members.length > 1) {
      out.add(path, `oneof "${oneof}" has more than one field set (${members.join(", ")}); set at most one`);
    }
  }
}

/**
 * Lists every way `object` fails to be a faithful plain-object form of message `type`.
 *
 * @param path how the object is named in messages; defaults to the type's short name
 * @returns the problems (at most 20, then a summary), empty when `Type.fromObject` will convert it faithfully
 */
export function checkMessageObject(
  type: protobuf.Type,
  object: unknown,
  path: string = shortName(type.fullName),
): SchemaProblem[] {
  const out = new Collector();
  checkMessage(type, object, path, out, 0);
  if (out.dropped > 0) out.problems.push({ path, message: `${out.dropped} more problems not shown` });
  return out.problems;
}
