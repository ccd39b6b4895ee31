/**
 * The few DiscoveryRequest and DiscoveryResponse fields the agent reads and writes, on the wire, without Envoy's
 * schema: the relay, SDS and the name table subscription only route, replay and acknowledge, and an agent
 * that held the whole schema for that would keep it resident for its life.
 *
 * @module
 */
import { LEN, lenFieldSize, utf8Bytes, VARINT, varintFieldSize, WireWriter } from "@mesh/proto/_wire";

/** One field of an encoded message. */
export interface WireField {
  readonly field: number;
  readonly wireType: number;
  /** Where the field's tag starts. */
  readonly start: number;
  /** Where its payload starts (for a length-delimited field, after the length). */
  readonly valueStart: number;
  /** Where the field ends. */
  readonly end: number;
  /** A varint field's value; 0 for other wire types. */
  readonly value: number;
}

/** DiscoveryRequest field numbers (envoy/service/discovery/v3/discovery.proto). */
export const REQUEST_FIELD = {
  versionInfo: 1,
  node: 2,
  resourceNames: 3,
  typeUrl: 4,
  responseNonce: 5,
  errorDetail: 6,
  resourceLocators: 7,
} as const;

/** DiscoveryResponse field numbers. */
const RESPONSE_FIELD = { versionInfo: 1, resources: 2, typeUrl: 4, nonce: 5 } as const;

/** The varint at `pos` (up to 2^53) and where it ends; throws when it runs past the end or is too long. */
function readVarint(bytes: Uint8Array, pos: number): [number, number] {
  let value = 0;
  let scale = 1;
  for (let i = pos; i < bytes.length && i < pos + 8; i++) {
    const byte = bytes[i];
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return [value, i + 1];
    scale *= 128;
  }
  throw new TypeError(`Truncated or oversized varint at byte ${pos} of ${bytes.length}`);
}

/**
 * The top-level fields of an encoded message, in wire order.
 *
 * @throws {TypeError} when the bytes are not a protobuf message (bad tag, wire type or length)
 */
export function scanFields(bytes: Uint8Array): WireField[] {
  const fields: WireField[] = [];
  let pos = 0;
  while (pos < bytes.length) {
    const start = pos;
    const [tag, afterTag] = readVarint(bytes, pos);
    const field = Math.floor(tag / 8);
    const wireType = tag % 8;
    if (field === 0) throw new TypeError(`Field number 0 at byte ${start}`);
    let valueStart = afterTag;
    let value = 0;
    switch (wireType) {
      case 0:
        [value, pos] = readVarint(bytes, afterTag);
        break;
      case 1:
        pos = afterTag + 8;
        break;
      case 2: {
        const [length, afterLength] = readVarint(bytes, afterTag);
        valueStart = afterLength;
        pos = afterLength + length;
        break;
      }
      case 5:
        pos = afterTag + 4;
        break;
      default:
        throw new TypeError(
          `Wire type ${wireType} of field ${field} at byte ${start}: expected 0, 1, 2 or 5`,
        );
    }
    if (pos > bytes.length) {
      throw new TypeError(`Field ${field} at byte ${start} runs past the end of ${bytes.length} bytes`);
    }
    fields.push({ field, wireType, start, valueStart, end: pos, value });
  }
  return fields;
}

/** Fails unless each of `lenFields` that is present is length-delimited, as the schema declares it. */
function requireLen(fields: readonly WireField[], lenFields: ReadonlySet<number>, message: string): void {
  for (const f of fields) {
    if (lenFields.has(f.field) && f.wireType !== LEN) {
      throw new TypeError(`${message} field ${f.field} has wire type ${f.wireType}: expected ${LEN}`);
    }
  }
}

const utf8 = new TextDecoder();
const text = (bytes: Uint8Array, f: WireField) => utf8.decode(bytes.subarray(f.valueStart, f.end));

/** What the agent reads of a DiscoveryRequest. */
export interface RequestFields {
  readonly versionInfo: string;
  readonly resourceNames: readonly string[];
  readonly typeUrl: string;
  readonly responseNonce: string;
  /** The `node` field as it came, tag included; absent when the request carries none. */
  readonly node?: Uint8Array;
  /** `error_detail`, when the request is a NACK. */
  readonly errorDetail?: { readonly code: number; readonly message: string };
}

const REQUEST_LEN_FIELDS: ReadonlySet<number> = new Set([1, 2, 3, 4, 5, 6, 7]);

/**
 * Reads a DiscoveryRequest's scalar fields, its names, its node (as bytes) and its error detail.
 *
 * @throws {TypeError} when the bytes are not a DiscoveryRequest
 */
export function readDiscoveryRequest(bytes: Uint8Array): RequestFields {
  const fields = scanFields(bytes);
  requireLen(fields, REQUEST_LEN_FIELDS, "DiscoveryRequest");
  let versionInfo = "";
  let typeUrl = "";
  let responseNonce = "";
  let node: Uint8Array | undefined;
  let errorDetail: RequestFields["errorDetail"];
  const resourceNames: string[] = [];
  for (const f of fields) {
    // Last one wins for a repeated scalar field, as in protobuf.
    switch (f.field) {
      case REQUEST_FIELD.versionInfo:
        versionInfo = text(bytes, f);
        break;
      case REQUEST_FIELD.node:
        node = bytes.slice(f.start, f.end);
        break;
      case REQUEST_FIELD.resourceNames:
        resourceNames.push(text(bytes, f));
        break;
      case REQUEST_FIELD.typeUrl:
        typeUrl = text(bytes, f);
        break;
      case REQUEST_FIELD.responseNonce:
        responseNonce = text(bytes, f);
        break;
      case REQUEST_FIELD.errorDetail:
        errorDetail = readStatus(bytes.subarray(f.valueStart, f.end));
        break;
    }
  }
  return {
    versionInfo,
    resourceNames,
    typeUrl,
    responseNonce,
    ...(node !== undefined ? { node } : {}),
    ...(errorDetail !== undefined ? { errorDetail } : {}),
  };
}

/** `google.rpc.Status`: code (1, varint) and message (2). */
function readStatus(bytes: Uint8Array): { code: number; message: string } {
  let code = 0;
  let message = "";
  for (const f of scanFields(bytes)) {
    if (f.field === 1 && f.wireType === VARINT) code = f.value;
    if (f.field === 2 && f.wireType === LEN) message = text(bytes, f);
  }
  return { code, message };
}

/**
 * A copy of an encoded message without the fields in `drop`, with `prefix` (whole encoded fields) in front.
 *
 * @throws {TypeError} when the bytes are not a protobuf message
 */
export function rewriteFields(
  bytes: Uint8Array,
  drop: ReadonlySet<number>,
  prefix: Uint8Array = new Uint8Array(),
): Uint8Array {
  const kept = scanFields(bytes).filter((f) => !drop.has(f.field));
  const size = prefix.length + kept.reduce((sum, f) => sum + f.end - f.start, 0);
  const out = new Uint8Array(size);
  out.set(prefix);
  let pos = prefix.length;
  for (const f of kept) {
    out.set(bytes.subarray(f.start, f.end), pos);
    pos += f.end - f.start;
  }
  return out;
}

/** The DiscoveryRequest fields the agent itself sends: a subscription, an ACK or a NACK. */
export interface OwnRequest {
  readonly typeUrl: string;
  readonly versionInfo?: string;
  readonly responseNonce?: string;
  readonly errorDetail?: { readonly code: number; readonly message: string };
}

/** Encodes a DiscoveryRequest without node or names. */
export function encodeDiscoveryRequest(request: OwnRequest): Uint8Array {
  const strings: [number, Uint8Array][] = [];
  for (
    const [field, value] of [
      [REQUEST_FIELD.versionInfo, request.versionInfo ?? ""],
      [REQUEST_FIELD.typeUrl, request.typeUrl],
      [REQUEST_FIELD.responseNonce, request.responseNonce ?? ""],
    ] as const
  ) {
    if (value !== "") strings.push([field, utf8Bytes(value)]);
  }
  let status: Uint8Array | undefined;
  if (request.errorDetail !== undefined) {
    const message = utf8Bytes(request.errorDetail.message);
    const code = request.errorDetail.code;
    const statusWriter = new WireWriter(
      (code !== 0 ? varintFieldSize(1, code) : 0) +
        (message.length > 0 ? lenFieldSize(2, message.length) : 0),
    );
    if (code !== 0) statusWriter.varintField(1, code);
    if (message.length > 0) statusWriter.lenField(2, message);
    status = statusWriter.finish();
  }
  const size = strings.reduce((sum, [field, value]) => sum + lenFieldSize(field, value.length), 0) +
    (status !== undefined ? lenFieldSize(REQUEST_FIELD.errorDetail, status.length) : 0);
  const writer = new WireWriter(size);
  for (const [field, value] of strings) writer.lenField(field, value);
  if (status !== undefined) writer.lenField(REQUEST_FIELD.errorDetail, status);
  return writer.finish();
}

/** What the agent reads of a DiscoveryResponse. */
export interface ResponseFields {
  readonly versionInfo: string;
  readonly typeUrl: string;
  readonly nonce: string;
  /** Each resource's `google.protobuf.Any`, encoded. */
  readonly resources: readonly Uint8Array[];
}

const RESPONSE_LEN_FIELDS: ReadonlySet<number> = new Set([1, 2, 4, 5, 6]);

/**
 * Reads a DiscoveryResponse's version, type URL, nonce and resources.
 *
 * @throws {TypeError} when the bytes are not a DiscoveryResponse
 */
export function readDiscoveryResponse(bytes: Uint8Array): ResponseFields {
  const fields = scanFields(bytes);
  requireLen(fields, RESPONSE_LEN_FIELDS, "DiscoveryResponse");
  let versionInfo = "";
  let typeUrl = "";
  let nonce = "";
  const resources: Uint8Array[] = [];
  for (const f of fields) {
    if (f.field === RESPONSE_FIELD.versionInfo) versionInfo = text(bytes, f);
    else if (f.field === RESPONSE_FIELD.typeUrl) typeUrl = text(bytes, f);
    else if (f.field === RESPONSE_FIELD.nonce) nonce = text(bytes, f);
    else if (f.field === RESPONSE_FIELD.resources) resources.push(bytes.subarray(f.valueStart, f.end));
  }
  return { versionInfo, typeUrl, nonce, resources };
}
