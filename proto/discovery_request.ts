/**
 * Decodes `DiscoveryRequest` and `DeltaDiscoveryRequest` bytes from a proxy into plain objects, with the node's
 * metadata (a `google.protobuf.Struct`) turned into plain JSON.
 *
 * @module
 */
import type protobuf from "protobufjs";
import { loadEnvoySchema } from "./envoy_schema.ts";
import { messageToPlain } from "./plain_message.ts";
import type { JsonObject } from "./struct_json.ts";

/** `envoy.config.core.v3.Locality`. */
export interface XdsLocality {
  /** The region. */
  readonly region: string;
  /** The zone within the region. */
  readonly zone: string;
  /** The sub-zone within the zone. */
  readonly sub_zone: string;
}

/** `envoy.config.core.v3.Node` as a plain object; rarely used fields are reachable through the index. */
export interface XdsNode {
  /** The proxy id, e.g. `sidecar~10.1.2.3~pod.ns~ns.svc.cluster.local`. */
  readonly id: string;
  /** The proxy's service cluster. */
  readonly cluster: string;
  /** The node metadata as plain JSON (`{}` when the proxy sent none). */
  readonly metadata: JsonObject;
  /** Where the proxy runs. */
  readonly locality?: XdsLocality;
  /** The client kind, e.g. `envoy` or `grpc-node-js`. */
  readonly user_agent_name: string;
  /** Set when the proxy sent a version string. */
  readonly user_agent_version?: string;
  /** Features the client announces. */
  readonly client_features: readonly string[];
  /** Any other field of the message, in the same plain form. */
  readonly [field: string]: unknown;
}

/** `google.rpc.Status` as a plain object; details stay encoded Any objects. */
export interface RpcStatus {
  /** The gRPC status code. */
  readonly code: number;
  /** The proxy's error text. */
  readonly message: string;
  /** Encoded details. */
  readonly details: readonly { readonly type_url: string; readonly value: Uint8Array }[];
}

/** A decoded state-of-the-world `DiscoveryRequest`. */
export interface DiscoveryRequest {
  /** The version last accepted; empty on the first request. */
  readonly version_info: string;
  /** Proxies send the node on the first request of a stream only. */
  readonly node?: XdsNode;
  /** The resources subscribed to; empty means all (wildcard). */
  readonly resource_names: readonly string[];
  /** The resource type requested. */
  readonly type_url: string;
  /** The nonce of the response this request ACKs or NACKs. */
  readonly response_nonce: string;
  /** Set on a NACK. */
  readonly error_detail?: RpcStatus;
  /** Any other field of the message, in the same plain form. */
  readonly [field: string]: unknown;
}

/** A decoded incremental `DeltaDiscoveryRequest`. */
export interface DeltaDiscoveryRequest {
  /** The proxy; sent on the first request of a stream. */
  readonly node?: XdsNode;
  /** The resource type requested. */
  readonly type_url: string;
  /** Names to add to the subscription. */
  readonly resource_names_subscribe: readonly string[];
  /** Names to drop from the subscription. */
  readonly resource_names_unsubscribe: readonly string[];
  /** Versions the proxy already has, on reconnect. */
  readonly initial_resource_versions: Readonly<Record<string, string>>;
  /** The nonce of the response this request ACKs or NACKs. */
  readonly response_nonce: string;
  /** Set on a NACK. */
  readonly error_detail?: RpcStatus;
  /** Any other field of the message, in the same plain form. */
  readonly [field: string]: unknown;
}

function decodeAs(typeName: string, bytes: Uint8Array, root: protobuf.Root): Record<string, unknown> {
  const type = root.lookupType(typeName);
  let message: protobuf.Message;
  try {
    message = type.decode(bytes);
  } catch (cause) {
    throw new TypeError(
      `Malformed ${typeName.slice(typeName.lastIndexOf(".") + 1)} (${bytes.length} bytes): ${
        (cause as Error).message
      }`,
      { cause },
    );
  }
  const plain = messageToPlain(type, message);
  const node = plain.node as Record<string, unknown> | undefined;
  // A node without metadata has no Struct to convert; callers still get an object to read keys from.
  if (node !== undefined && node.metadata === undefined) node.metadata = {};
  return plain;
}

/**
 * Decodes a DiscoveryRequest.
 *
 * @throws {TypeError} when the bytes are not a valid DiscoveryRequest
 */
export function decodeDiscoveryRequest(
  bytes: Uint8Array,
  root: protobuf.Root = loadEnvoySchema(),
): DiscoveryRequest {
  return decodeAs("envoy.service.discovery.v3.DiscoveryRequest", bytes, root) as DiscoveryRequest;
}

/**
 * Decodes a DeltaDiscoveryRequest.
 *
 * @throws {TypeError} when the bytes are not a valid DeltaDiscoveryRequest
 */
export function decodeDeltaDiscoveryRequest(
  bytes: Uint8Array,
  root: protobuf.Root = loadEnvoySchema(),
): DeltaDiscoveryRequest {
  return decodeAs("envoy.service.discovery.v3.DeltaDiscoveryRequest", bytes, root) as DeltaDiscoveryRequest;
}

/** A DiscoveryRequest's `resource_names` as one run of encoded entries, and the message without them. */
export interface SplitRequest {
  /** The message without the run. */
  readonly rest: Uint8Array;
  /** The `resource_names` entries (field 3), back to back as they arrived. */
  readonly names: Uint8Array;
}

/**
 * Finds the `resource_names` of a DiscoveryRequest when they are one contiguous run of entries, as every
 * encoder that writes fields in order produces. Undefined when there are none, when they are interleaved with
 * other fields, or when the bytes do not parse (the full decoder then reports what is wrong).
 */
export function splitResourceNames(bytes: Uint8Array): SplitRequest | undefined {
  let start = -1;
  let end = -1;
  let pos = 0;
  while (pos < bytes.length) {
    const fieldStart = pos;
    const tag = readVarint(bytes, pos);
    if (tag < 0) return undefined;
    pos = varintEnd;
    const field = Math.floor(tag / 8);
    const wireType = tag % 8;
    if (field === 3) {
      if (wireType !== 2 || (start >= 0 && end !== fieldStart)) return undefined;
      if (start < 0) start = fieldStart;
    }
    switch (wireType) {
      case 0:
        if (readVarint(bytes, pos) < 0) return undefined;
        pos = varintEnd;
        break;
      case 1:
        pos += 8;
        break;
      case 2: {
        const length = readVarint(bytes, pos);
        if (length < 0) return undefined;
        pos = varintEnd + length;
        break;
      }
      case 5:
        pos += 4;
        break;
      default:
        return undefined;
    }
    if (pos > bytes.length) return undefined;
    if (field === 3) end = pos;
  }
  if (start < 0) return undefined;
  const rest = new Uint8Array(bytes.length - (end - start));
  rest.set(bytes.subarray(0, start));
  rest.set(bytes.subarray(end), start);
  return { rest, names: bytes.subarray(start, end) };
}

const utf8 = new TextDecoder();

/** Decodes a run of `resource_names` entries (see {@link splitResourceNames}). */
export function decodeNameRun(run: Uint8Array): string[] {
  const out: string[] = [];
  let pos = 0;
  while (pos < run.length) {
    readVarint(run, pos);
    const length = readVarint(run, varintEnd);
    out.push(utf8.decode(run.subarray(varintEnd, varintEnd + length)));
    pos = varintEnd + length;
  }
  return out;
}

/**
 * Decodes a DiscoveryRequest, turning its `resource_names` into a list through `listOf`, which is given
 * their encoded run: a caller can hand every request that repeats a run the list it made the first time.
 *
 * @throws {TypeError} when the bytes are not a valid DiscoveryRequest
 */
export function decodeDiscoveryRequestSharingNames(
  bytes: Uint8Array,
  root: protobuf.Root,
  listOf: (run: Uint8Array) => readonly string[],
): DiscoveryRequest {
  return decodeAck(bytes, listOf) ??
    decodeSharingNames(bytes, (b) => decodeDiscoveryRequest(b, root), "resource_names", listOf);
}

/** The empty list every decoded ACK without names or locators shares; decoded lists are never modified. */
const NONE: readonly never[] = Object.freeze([]);

/**
 * Decodes the request a proxy sends after every response — version, names, type and nonce, no node and no
 * error — without the schema: the generic decoder allocated several arrays per string it read (a fifth of
 * what a 1000-proxy push allocated was its ACKs). Undefined for any other field, a wire type the schema
 * does not give these fields, names that are not one run, or bytes that do not parse; the full decoder
 * then takes the request.
 */
function decodeAck(
  bytes: Uint8Array,
  listOf: (run: Uint8Array) => readonly string[],
): DiscoveryRequest | undefined {
  let version = "";
  let typeUrl = "";
  let nonce = "";
  let namesStart = -1;
  let namesEnd = -1;
  let pos = 0;
  while (pos < bytes.length) {
    const fieldStart = pos;
    const tag = readVarint(bytes, pos);
    if (tag < 0 || tag % 8 !== 2) return undefined;
    const length = readVarint(bytes, varintEnd);
    if (length < 0) return undefined;
    const start = varintEnd;
    pos = start + length;
    if (pos > bytes.length) return undefined;
    // Last one wins for a repeated scalar field, as in protobuf.
    switch (Math.floor(tag / 8)) {
      case 1:
        version = utf8.decode(bytes.subarray(start, pos));
        break;
      case 3:
        if (namesStart >= 0 && namesEnd !== fieldStart) return undefined;
        if (namesStart < 0) namesStart = fieldStart;
        namesEnd = pos;
        break;
      case 4:
        typeUrl = utf8.decode(bytes.subarray(start, pos));
        break;
      case 5:
        nonce = utf8.decode(bytes.subarray(start, pos));
        break;
      default:
        return undefined;
    }
  }
  return {
    version_info: version,
    resource_names: namesStart < 0 ? NONE : listOf(bytes.subarray(namesStart, namesEnd)),
    resource_locators: NONE,
    type_url: typeUrl,
    response_nonce: nonce,
  };
}

/**
 * Decodes a DeltaDiscoveryRequest, turning its `resource_names_subscribe` (field 3, as `resource_names` is in
 * a DiscoveryRequest) into a list through `listOf`, given their encoded run.
 *
 * @throws {TypeError} when the bytes are not a valid DeltaDiscoveryRequest
 */
export function decodeDeltaDiscoveryRequestSharingNames(
  bytes: Uint8Array,
  root: protobuf.Root,
  listOf: (run: Uint8Array) => readonly string[],
): DeltaDiscoveryRequest {
  return decodeSharingNames(
    bytes,
    (b) => decodeDeltaDiscoveryRequest(b, root),
    "resource_names_subscribe",
    listOf,
  );
}

/** Decodes with `decode`, the field-3 name run (when one contiguous run) set to what `listOf` makes of it. */
function decodeSharingNames<R, K extends keyof R>(
  bytes: Uint8Array,
  decode: (bytes: Uint8Array) => R,
  field: K,
  listOf: (run: Uint8Array) => readonly string[],
): R {
  const split = splitResourceNames(bytes);
  if (split === undefined) return decode(bytes);
  return { ...decode(split.rest), [field]: listOf(split.names) };
}

/** Where the varint last read by {@link readVarint} ended (kept outside to read without allocating). */
let varintEnd = 0;

/** The varint at `pos` (up to 2^53), ending at `varintEnd`; -1 when it runs past the end or is too long. */
function readVarint(bytes: Uint8Array, pos: number): number {
  let value = 0;
  let scale = 1;
  for (let i = pos; i < bytes.length && i < pos + 8; i++) {
    const byte = bytes[i];
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) {
      varintEnd = i + 1;
      return value;
    }
    scale *= 128;
  }
  return -1;
}
