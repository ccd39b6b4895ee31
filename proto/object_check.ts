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

/** How a step of a path is written: `.field`, `[index]`, `["map key"]` or `(AnyType)`. */
const enum Step {
  Field,
  Index,
  MapKey,
  AnyType,
}

/**
 * Collects problems, and the path to the value being checked as a stack of steps: the path is written out only
 * when a problem is found, so checking a resource that fits allocates no path strings.
 */
class Collector {
  readonly problems: SchemaProblem[] = [];
  dropped = 0;
  readonly #steps: (string | number)[] = [];
  readonly #kinds: Step[] = [];

  constructor(readonly root: string) {}

  enter(kind: Step, step: string | number): void {
    this.#kinds.push(kind);
    this.#steps.push(step);
  }

  leave(): void {
    this.#kinds.pop();
    this.#steps.pop();
  }

  /** Adds a problem at the current path, and one more step when `field` is given. */
  add(message: string, field?: string): void {
    if (this.problems.length >= MAX_PROBLEMS) {
      this.dropped++;
      return;
    }
    let path = this.root;
    for (let i = 0; i < this.#steps.length; i++) {
      const step = this.#steps[i];
      switch (this.#kinds[i]) {
        case Step.Field:
          path += `.${step}`;
          break;
        case Step.Index:
          path += `[${step}]`;
          break;
        case Step.MapKey:
          path += `[${JSON.stringify(step)}]`;
          break;
        case Step.AnyType:
          path += `(${step})`;
          break;
      }
    }
    if (field !== undefined) path += `.${field}`;
    this.problems.push({ path, message });
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

function checkFieldValue(field: protobuf.Field, value: unknown, out: Collector, depth: number): void {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type) return checkMessage(resolved, value, out, depth + 1);
  const problem = resolved instanceof protobuf.Enum
    ? checkEnum(resolved, value)
    : checkScalar(field.type, value);
  if (problem !== undefined) out.add(problem);
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
  out: Collector,
  depth: number,
) {
  const typeUrl = object["@type"];
  if (typeof typeUrl !== "string") {
    out.add(`expected "@type" to be a type URL string, got ${show(typeUrl)}`);
    return;
  }
  const inner = typeForTypeUrl(anyType.root as protobuf.Root, typeUrl);
  if (inner === undefined) {
    out.add(`type URL "${typeUrl}" names no message type in the loaded schema`);
    return;
  }
  out.enter(Step.AnyType, shortName(fullNameOf(inner)));
  checkMessage(inner, object, out, depth + 1, "@type");
  out.leave();
}

/** The names of `value`'s fields that are set members of `oneof`, in the object's order. */
function setMembers(oneof: protobuf.OneOf, value: Record<string, unknown>): string[] {
  return Object.keys(value).filter((key) =>
    oneof.oneof.includes(key) && value[key] !== undefined && value[key] !== null
  );
}

/** Checks `value` as message `type` at the collector's path; `skip` names a key that is not a field (an Any's `@type`). */
function checkMessage(
  type: protobuf.Type,
  value: unknown,
  out: Collector,
  depth: number,
  skip?: string,
): void {
  if (depth > protobuf.util.recursionLimit) {
    out.add(`nested deeper than ${protobuf.util.recursionLimit} messages`);
    return;
  }
  if (value instanceof protobuf.Message) {
    // fromObject passes message instances through unchanged; they are checked by construction.
    if ((value as protobuf.Message & { $type?: protobuf.Type }).$type === type) return;
  }
  if (!isPlainObject(value)) {
    out.add(`expected an object for message ${type.fullName.slice(1)}, got ${show(value)}`);
    return;
  }
  if (skip === undefined && fullNameOf(type) === ".google.protobuf.Any" && Object.hasOwn(value, "@type")) {
    return checkAnyObject(type, value, out, depth);
  }
  // for...in rather than Object.entries: no array per message, no pair per field.
  let oneofSet = false;
  for (const key in value) {
    if (!Object.hasOwn(value, key) || key === skip) continue;
    const item = value[key];
    const field = type.fields[key];
    if (field === undefined) {
      // toObject({oneofs: true}) adds the oneof's name holding the set member's name; fromObject ignores it.
      if (type.oneofs?.[key] !== undefined && (typeof item === "string" || item === undefined)) continue;
      out.add(unknownKeyProblem(type, key), key);
      continue;
    }
    if (item === undefined || item === null) continue;
    if (field.partOf) oneofSet = true;
    out.enter(Step.Field, key);
    if (field instanceof protobuf.MapField) {
      if (!isPlainObject(item)) {
        out.add(`expected an object for map<${field.keyType}, ${field.type}>, got ${show(item)}`);
      } else {
        for (const mapKey in item) {
          if (!Object.hasOwn(item, mapKey)) continue;
          out.enter(Step.MapKey, mapKey);
          const keyProblem = checkMapKey(field.keyType, mapKey);
          if (keyProblem !== undefined) out.add(keyProblem);
          checkFieldValue(field, item[mapKey], out, depth);
          out.leave();
        }
      }
    } else if (field.repeated) {
      if (!Array.isArray(item)) {
        out.add(`expected an array for repeated ${field.type}, got ${show(item)}`);
      } else {
        for (let i = 0; i < item.length; i++) {
          out.enter(Step.Index, i);
          checkFieldValue(field, item[i], out, depth);
          out.leave();
        }
      }
    } else {
      checkFieldValue(field, item, out, depth);
    }
    out.leave();
  }
  if (!oneofSet) return;
  for (const oneof of type.oneofsArray) {
    let set = 0;
    for (const name of oneof.oneof) if (value[name] !== undefined && value[name] !== null) set++;
    if (set > 1) {
      const members = setMembers(oneof, value).join(", ");
      out.add(`oneof "${oneof.name}" has more than one field set (${members}); set at most one`);
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
  const out = new Collector(path);
  checkMessage(type, object, out, 0);
  if (out.dropped > 0) out.problems.push({ path, message: `${out.dropped} more problems not shown` });
  return out.problems;
}
