/**
 * Encodes resources to `google.protobuf.Any` bytes once, and decodes them back, against Envoy's schema.
 *
 * @module
 */
import protobuf from "protobufjs";
import { loadEnvoySchema } from "./envoy_schema.ts";
import { checkMessageObject } from "./object_check.ts";
import { typeNameOf } from "./type_urls.ts";

const typeCache = new WeakMap<protobuf.Root, Map<string, protobuf.Type>>();

/**
 * Returns the message type a type URL names.
 *
 * @throws {TypeError} when the schema has no message of that name
 */
export function messageTypeForUrl(typeUrl: string, root: protobuf.Root = loadEnvoySchema()): protobuf.Type {
  let byUrl = typeCache.get(root);
  if (byUrl === undefined) {
    byUrl = new Map();
    typeCache.set(root, byUrl);
  }
  const cached = byUrl.get(typeUrl);
  if (cached !== undefined) return cached;
  const name = typeNameOf(typeUrl);
  let found: protobuf.ReflectionObject | null = null;
  try {
    found = name === "" ? null : root.lookup(name);
  } catch {
    found = null;
  }
  if (!(found instanceof protobuf.Type)) {
    throw new TypeError(
      `Unknown type URL "${typeUrl}": the loaded schema has no message "${name}"; ` +
        `expected "type.googleapis.com/<package>.<Message>" of a loaded .proto file`,
    );
  }
  byUrl.set(typeUrl, found);
  return found;
}

/**
 * Converts a plain object to a protobufjs message of `type`, after checking it field by field.
 *
 * @throws {TypeError} listing every problem with its field path, e.g.
 *   `Cluster.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value: ...`
 */
export function messageFromObject(type: protobuf.Type, object: unknown): protobuf.Message {
  const problems = checkMessageObject(type, object);
  if (problems.length > 0) {
    const list = problems.map((problem) => `${problem.path}: ${problem.message}`).join("; ");
    throw new TypeError(`Cannot encode ${type.fullName.slice(1)}: ${list}`);
  }
  try {
    return type.fromObject(object as Record<string, unknown>);
  } catch (cause) {
    throw new TypeError(
      `Cannot encode ${type.fullName.slice(1)}: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
  }
}

/**
 * Encodes a resource as the bytes of a `google.protobuf.Any` with the given type URL.
 *
 * Nested Any fields may be written as `{ "@type": TYPE_URL.x, ...fields }`. Struct fields must use the
 * camelCase Value keys protobufjs expects (see `jsonToStruct`); other keys are the `.proto` names.
 *
 * @param typeUrl e.g. `TYPE_URL.cluster`
 * @param object the resource as a plain object (or an already built protobufjs message of that type)
 * @throws {TypeError} for an unknown type URL, or listing every field that does not fit the schema
 */
export function encodeAny(
  typeUrl: string,
  object: Record<string, unknown> | protobuf.Message,
  root: protobuf.Root = loadEnvoySchema(),
): Uint8Array {
  const type = messageTypeForUrl(typeUrl, root);
  const message = messageFromObject(type, object);
  // Any is type_url = 1 (string), value = 2 (bytes); the resource is written straight into the Any's buffer.
  const writer = protobuf.Writer.create();
  writer.uint32(0x0a).string(typeUrl).uint32(0x12).fork();
  return type.encode(message, writer).ldelim().finish();
}

/**
 * Encodes a message without the Any wrapper.
 *
 * @throws {TypeError} as `encodeAny` does
 */
export function encodeMessage(
  typeUrl: string,
  object: Record<string, unknown> | protobuf.Message,
  root: protobuf.Root = loadEnvoySchema(),
): Uint8Array {
  const type = messageTypeForUrl(typeUrl, root);
  return type.encode(messageFromObject(type, object)).finish();
}

/** A decoded `google.protobuf.Any`. */
export interface DecodedAny {
  /** The Any's type URL, e.g. `TYPE_URL.cluster`. */
  readonly typeUrl: string;
  /**
   * The resource in the object form `encodeAny` accepts: `.proto` field names, enums as names, 64-bit
   * integers as decimal strings, nested Any as `{"@type", ...}` when their type is loaded.
   */
  readonly resource: Record<string, unknown>;
}

/** Conversion options that make `toObject`'s output acceptable to `encodeAny` again. */
const TO_OBJECT: protobuf.IConversionOptions = { longs: String, enums: String, json: true };

/**
 * Decodes the bytes of a `google.protobuf.Any` and the resource inside it.
 *
 * @throws {TypeError} when the bytes are not a valid Any or resource, or the type URL is not in the schema
 */
export function decodeAny(bytes: Uint8Array, root: protobuf.Root = loadEnvoySchema()): DecodedAny {
  const anyType = root.lookupType("google.protobuf.Any");
  let any: { type_url: string; value: Uint8Array };
  try {
    any = anyType.decode(bytes) as unknown as { type_url: string; value: Uint8Array };
  } catch (cause) {
    throw new TypeError(
      `Malformed google.protobuf.Any (${bytes.length} bytes): ${(cause as Error).message}`,
      {
        cause,
      },
    );
  }
  const type = messageTypeForUrl(any.type_url, root);
  let message: protobuf.Message;
  try {
    message = type.decode(any.value);
  } catch (cause) {
    throw new TypeError(`Malformed "${any.type_url}" resource in an Any: ${(cause as Error).message}`, {
      cause,
    });
  }
  return { typeUrl: any.type_url, resource: type.toObject(message, TO_OBJECT) };
}
