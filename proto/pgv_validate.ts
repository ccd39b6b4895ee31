/**
 * Checks decoded Envoy resources against the protoc-gen-validate rules in Envoy's own `.proto` files, the
 * checks Envoy runs before it accepts a resource. Nested `google.protobuf.Any` fields (`typed_config`, ...)
 * are decoded by their type URL and checked too.
 *
 * Semantics follow PGV: rules on a proto3 scalar apply to its default value as well (an empty `name` fails
 * `min_len: 1`); rules on a oneof member apply only when that member is set; rules on a message field apply
 * only when it is set, except `required`; wrapper types (`google.protobuf.UInt32Value`, ...) take the
 * rules of the wrapped scalar.
 *
 * @module
 */
import protobuf from "protobufjs";
import { fullNameOf, typeForTypeUrl } from "./_reflection_cache.ts";
import { messageFromObject, messageTypeForUrl } from "./any_codec.ts";
import { loadEnvoySchema } from "./envoy_schema.ts";
import { checkMessageObject, shortName } from "./object_check.ts";
import {
  checkAnyRules,
  checkBoolRules,
  checkBytesRules,
  checkDurationRules,
  checkEnumRules,
  checkNumberRules,
  checkStringRules,
  checkTimestampRules,
} from "./pgv_checks.ts";
import { fieldRules, messageValidationDisabled, oneofRequired, type PgvRules } from "./pgv_rules.ts";
import { typeNameOf } from "./type_urls.ts";

/** One broken validation rule. */
export interface PgvViolation {
  /** Where, e.g. `Cluster.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address`. */
  readonly path: string;
  /** What the rule requires, e.g. `must be <= 65535 (got 70000)`. */
  readonly message: string;
}

/** Options of `validatePgv`. */
export interface PgvOptions {
  /** The schema; Envoy's (`loadEnvoySchema()`) when omitted. */
  readonly root?: protobuf.Root;
  /** The time timestamp rules `lt_now`, `gt_now` and `within` compare with; the current time by default. */
  readonly now?: Date;
  /** Whether an Any whose type is not in the schema is a violation (true by default) or skipped. */
  readonly requireKnownAnyTypes?: boolean;
}

type Loose = Record<string, unknown>;

const WRAPPERS: Readonly<Record<string, string>> = {
  ".google.protobuf.DoubleValue": "double",
  ".google.protobuf.FloatValue": "float",
  ".google.protobuf.Int64Value": "int64",
  ".google.protobuf.UInt64Value": "uint64",
  ".google.protobuf.Int32Value": "int32",
  ".google.protobuf.UInt32Value": "uint32",
  ".google.protobuf.BoolValue": "bool",
  ".google.protobuf.StringValue": "string",
  ".google.protobuf.BytesValue": "bytes",
};

class Walk {
  readonly violations: PgvViolation[] = [];
  constructor(readonly root: protobuf.Root, readonly now: Date, readonly requireKnownAnyTypes: boolean) {}

  add(path: string, message: string): void {
    this.violations.push({ path, message });
  }

  message(type: protobuf.Type, message: Loose, path: string, depth: number): void {
    if (depth > protobuf.util.recursionLimit) return this.add(path, "is nested too deeply to validate");
    if (messageValidationDisabled(type)) return;
    for (const oneof of type.oneofsArray) {
      if (oneofRequired(oneof) && !oneof.fieldsArray.some((field) => isSet(message, field))) {
        this.add(
          `${path}.${oneof.name}`,
          `one of ${oneof.oneof.map((name) => `"${name}"`).join(", ")} must be set`,
        );
      }
    }
    for (const field of type.fieldsArray) {
      if (field.partOf && !isSet(message, field)) continue;
      const rules = fieldRules(field);
      const value = message[field.name];
      const path2 = `${path}.${field.name}`;
      if (field instanceof protobuf.MapField) this.map(field, rules, (value ?? {}) as Loose, path2, depth);
      else if (field.repeated) this.repeated(field, rules, (value ?? []) as unknown[], path2, depth);
      else this.single(field, rules, value, path2, depth);
    }
  }

  repeated(
    field: protobuf.Field,
    rules: PgvRules | undefined,
    items: unknown[],
    path: string,
    depth: number,
  ): void {
    const r = rules?.repeated as Loose | undefined;
    if (r?.min_items !== undefined && items.length < Number(r.min_items)) {
      this.add(path, `must have at least ${plural(r.min_items, "item")} (got ${items.length})`);
    }
    if (r?.max_items !== undefined && items.length > Number(r.max_items)) {
      this.add(path, `must have at most ${plural(r.max_items, "item")} (got ${items.length})`);
    }
    if (r?.unique === true) {
      const seen = new Set<string>();
      for (const [i, item] of items.entries()) {
        const key = item instanceof Uint8Array
          ? `b:${Array.from(item).join(",")}`
          : `${typeof item}:${String(item)}`;
        if (seen.has(key)) this.add(`${path}[${i}]`, "must be unique: it repeats an earlier item");
        seen.add(key);
      }
    }
    const itemRules = r?.items as PgvRules | undefined;
    items.forEach((item, i) => this.single(field, itemRules, item, `${path}[${i}]`, depth));
  }

  map(
    field: protobuf.MapField,
    rules: PgvRules | undefined,
    entries: Loose,
    path: string,
    depth: number,
  ): void {
    const r = rules?.map as Loose | undefined;
    const keys = Object.keys(entries);
    if (r?.min_pairs !== undefined && keys.length < Number(r.min_pairs)) {
      this.add(path, `must have at least ${plural(r.min_pairs, "entry", "entries")} (got ${keys.length})`);
    }
    if (r?.max_pairs !== undefined && keys.length > Number(r.max_pairs)) {
      this.add(path, `must have at most ${plural(r.max_pairs, "entry", "entries")} (got ${keys.length})`);
    }
    const keyRules = r?.keys as Loose | undefined;
    const valueRules = r?.values as PgvRules | undefined;
    for (const key of keys) {
      const entryPath = `${path}[${JSON.stringify(key)}]`;
      const keyRule = keyRules?.[field.keyType] as Loose | undefined;
      if (keyRule !== undefined) {
        const problem = field.keyType === "string"
          ? checkStringRules(keyRule, key)
          : field.keyType === "bool"
          ? checkBoolRules(keyRule, key === "true")
          : checkNumberRules(field.keyType, keyRule, key);
        if (problem !== undefined) this.add(entryPath, `key ${problem}`);
      }
      const value = entries[key];
      if (r?.no_sparse === true && (value === null || value === undefined)) {
        this.add(entryPath, "must not be a sparse (unset) map value");
      }
      this.single(field, valueRules, value, entryPath, depth);
    }
  }

  single(
    field: protobuf.FieldBase,
    rules: PgvRules | undefined,
    value: unknown,
    path: string,
    depth: number,
  ): void {
    const resolved = field.resolvedType;
    if (resolved instanceof protobuf.Type) return this.messageField(resolved, rules, value, path, depth);
    if (rules === undefined) return;
    let problem: string | undefined;
    if (resolved instanceof protobuf.Enum) {
      const r = rules.enum as Loose | undefined;
      if (r !== undefined) {
        problem = checkEnumRules(
          r,
          Number(value),
          Object.values(resolved.values),
          shortName(resolved.fullName),
        );
      }
    } else {
      problem = this.scalar(field.type, rules, value);
    }
    if (problem !== undefined) this.add(path, problem);
  }

  scalar(kind: string, rules: PgvRules, value: unknown): string | undefined {
    const r = rules[kind] as Loose | undefined;
    if (r === undefined) return undefined;
    if (kind === "string") return checkStringRules(r, String(value ?? ""));
    // An unset bytes field inherits protobufjs's default, which may be a plain empty array.
    if (kind === "bytes") return checkBytesRules(r, Uint8Array.from((value ?? []) as ArrayLike<number>));
    if (kind === "bool") return checkBoolRules(r, value === true);
    return checkNumberRules(kind, r, value ?? 0);
  }

  messageField(
    type: protobuf.Type,
    rules: PgvRules | undefined,
    value: unknown,
    path: string,
    depth: number,
  ): void {
    const present = value !== null && value !== undefined;
    const r = (key: string) => rules?.[key] as Loose | undefined;
    const required = r("message")?.required === true || r("duration")?.required === true ||
      r("timestamp")?.required === true || r("any")?.required === true;
    if (!present) {
      if (required) this.add(path, "is required");
      return;
    }
    const message = value as Loose;
    let problem: string | undefined;
    const typeName = fullNameOf(type);
    const wrapped = WRAPPERS[typeName];
    if (wrapped !== undefined && rules !== undefined) problem = this.scalar(wrapped, rules, message.value);
    else if (typeName === ".google.protobuf.Duration" && r("duration")) {
      problem = checkDurationRules(r("duration")!, message);
    } else if (typeName === ".google.protobuf.Timestamp" && r("timestamp")) {
      problem = checkTimestampRules(r("timestamp")!, message, this.now);
    } else if (typeName === ".google.protobuf.Any" && r("any")) {
      problem = checkAnyRules(r("any")!, String(message.type_url ?? ""));
    }
    if (problem !== undefined) this.add(path, problem);
    if (r("message")?.skip === true) return;
    if (typeName === ".google.protobuf.Any") return this.any(message, path, depth);
    this.message(type, message, path, depth + 1);
  }

  any(any: Loose, path: string, depth: number): void {
    const typeUrl = String(any.type_url ?? "");
    const inner = typeUrl === "" ? undefined : typeForTypeUrl(this.root, typeUrl);
    if (inner === undefined) {
      if (this.requireKnownAnyTypes) {
        this.add(path, `has type URL "${typeUrl}", which names no message in the loaded schema`);
      }
      return;
    }
    let decoded: protobuf.Message;
    try {
      decoded = inner.decode((any.value as Uint8Array | undefined) ?? new Uint8Array(0));
    } catch (cause) {
      return this.add(path, `holds bytes that are not a valid ${typeUrl}: ${(cause as Error).message}`);
    }
    this.message(inner, decoded as unknown as Loose, `${path}(${shortName(fullNameOf(inner))})`, depth + 1);
  }
}

/** "1 item", "2 items". */
function plural(n: unknown, one: string, many = `${one}s`): string {
  return `${n} ${Number(n) === 1 ? one : many}`;
}

/** Whether a field is set on a decoded message; oneof members are set only as own properties. */
function isSet(message: Loose, field: protobuf.Field): boolean {
  const value = message[field.name];
  if (value === null || value === undefined) return false;
  return field.partOf ? Object.hasOwn(message, field.name) : true;
}

function resolveType(typeUrlOrName: string, root: protobuf.Root): protobuf.Type {
  return messageTypeForUrl(typeUrlOrName.includes("/") ? typeUrlOrName : `/${typeUrlOrName}`, root);
}

/**
 * Lists every PGV rule a resource breaks.
 *
 * @param typeUrlOrName a type URL (`TYPE_URL.cluster`) or a full name (`envoy.config.cluster.v3.Cluster`)
 * @param message the encoded message, a protobufjs message, or a plain object in the form `encodeAny` takes
 *   (a plain object that does not fit the schema yields those problems as violations instead)
 * @returns the violations, empty when Envoy's field validation would accept the resource
 */
export function validatePgv(
  typeUrlOrName: string,
  message: Uint8Array | protobuf.Message | Record<string, unknown>,
  options: PgvOptions = {},
): PgvViolation[] {
  const root = options.root ?? loadEnvoySchema();
  const type = resolveType(typeUrlOrName, root);
  let bytes: Uint8Array;
  if (message instanceof Uint8Array) {
    bytes = message;
  } else {
    if (!(message instanceof protobuf.Message)) {
      const problems = checkMessageObject(type, message);
      if (problems.length > 0) {
        return problems.map((p) => ({ path: p.path, message: `does not fit the schema: ${p.message}` }));
      }
    }
    // Round-tripping through bytes gives exactly the presence Envoy sees (defaults dropped, oneofs as sent).
    bytes = type.encode(messageFromObject(type, message)).finish();
  }
  const walk = new Walk(root, options.now ?? new Date(), options.requireKnownAnyTypes ?? true);
  let decoded: protobuf.Message;
  try {
    decoded = type.decode(bytes);
  } catch (cause) {
    return [{
      path: shortName(type.fullName),
      message: `is not a valid encoding: ${(cause as Error).message}`,
    }];
  }
  walk.message(type, decoded as unknown as Loose, shortName(type.fullName), 0);
  return walk.violations;
}

/** Lists every PGV rule broken by the resource in an encoded `google.protobuf.Any` (see `validatePgv`). */
export function validatePgvAny(anyBytes: Uint8Array, options: PgvOptions = {}): PgvViolation[] {
  const root = options.root ?? loadEnvoySchema();
  const any = root.lookupType("google.protobuf.Any").decode(anyBytes) as unknown as Loose;
  const walk = new Walk(root, options.now ?? new Date(), options.requireKnownAnyTypes ?? true);
  walk.any(any, "", 0);
  // The root path is the resource's short name, without the "(...)" an embedded Any gets.
  return walk.violations.map((v) => ({ path: v.path.replace(/^\((\w+)\)/, "$1"), message: v.message }));
}

/** Renders violations one per line as `path: message`. */
export function formatPgvViolations(violations: readonly PgvViolation[]): string {
  return violations.map((v) => `${v.path}: ${v.message}`).join("\n");
}

/**
 * Throws unless the resource passes every PGV rule (see `validatePgv`).
 *
 * @throws {TypeError} listing every violation, one per line
 */
export function assertPgvValid(
  typeUrlOrName: string,
  message: Uint8Array | protobuf.Message | Record<string, unknown>,
  options: PgvOptions = {},
): void {
  const violations = validatePgv(typeUrlOrName, message, options);
  if (violations.length > 0) {
    throw new TypeError(
      `Resource "${typeNameOf(typeUrlOrName)}" breaks ${violations.length} validation rules:\n` +
        formatPgvViolations(violations),
    );
  }
}
