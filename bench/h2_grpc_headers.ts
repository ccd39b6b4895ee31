/**
 * The HPACK header blocks (RFC 7541) a gRPC response needs, encoded without the dynamic table and without
 * Huffman: static-table indexed fields and literals without indexing only, so the peer's decoder table never
 * changes and nothing here depends on what the peer's requests did to ours (the server never decodes them).
 *
 * @module
 */

/** `:status: 200`, static table entry 8. */
const STATUS_200_INDEX = 8;

/** `content-type`, static table entry 31 (name only). */
const CONTENT_TYPE_INDEX = 31;

const encoder = new TextEncoder();

/**
 * An HPACK integer (RFC 7541 §5.1) in a `prefixBits`-bit prefix whose first byte's upper bits are
 * `pattern`.
 */
export function hpackInteger(value: number, prefixBits: number, pattern: number): number[] {
  const max = (1 << prefixBits) - 1;
  if (value < max) return [pattern | value];
  const out = [pattern | max];
  let rest = value - max;
  while (rest >= 128) {
    out.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
  return out;
}

/** A string literal, not Huffman-coded (RFC 7541 §5.2). */
function stringLiteral(text: string): number[] {
  const bytes = encoder.encode(text);
  return [...hpackInteger(bytes.length, 7, 0x00), ...bytes];
}

/** A literal field without indexing whose name is static-table entry `index` (RFC 7541 §6.2.2). */
export function literalIndexedName(index: number, value: string): number[] {
  return [...hpackInteger(index, 4, 0x00), ...stringLiteral(value)];
}

/** A literal field without indexing with a literal name (RFC 7541 §6.2.2). */
export function literalNewName(name: string, value: string): number[] {
  return [0x00, ...stringLiteral(name), ...stringLiteral(value)];
}

/** The fields that open every gRPC response: `:status: 200` and `content-type: application/grpc`. */
const RESPONSE_FIELDS = [
  ...hpackInteger(STATUS_200_INDEX, 7, 0x80),
  ...literalIndexedName(CONTENT_TYPE_INDEX, "application/grpc"),
];

/** The header block of a gRPC response. */
export const RESPONSE_HEADERS_BLOCK = new Uint8Array(RESPONSE_FIELDS);

/** The trailer fields of a status: `grpc-status`, and `grpc-message` (percent-encoded) when given. */
function statusFields(status: number, message: string | undefined): number[] {
  const fields = literalNewName("grpc-status", String(status));
  if (message !== undefined && message !== "") {
    fields.push(...literalNewName("grpc-message", percentEncode(message)));
  }
  return fields;
}

/** The trailer block ending a gRPC response whose headers were sent. */
export function trailersBlock(status: number, message?: string): Uint8Array {
  return new Uint8Array(statusFields(status, message));
}

/** The single header block of a trailers-only response (a status before any message). */
export function trailersOnlyBlock(status: number, message?: string): Uint8Array {
  return new Uint8Array([...RESPONSE_FIELDS, ...statusFields(status, message)]);
}

/** gRPC's `grpc-message` encoding: printable ASCII but `%` as is, every other UTF-8 byte as `%XX`. */
function percentEncode(text: string): string {
  let out = "";
  for (const byte of encoder.encode(text)) {
    out += byte >= 0x20 && byte <= 0x7e && byte !== 0x25
      ? String.fromCharCode(byte)
      : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}
