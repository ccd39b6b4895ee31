/**
 * Test helper: writes protobuf wire format byte by byte from field numbers, independently of protobufjs and
 * `_wire.ts`, so tests can feed decoders the bytes any conforming client sends.
 *
 * @module
 */

/** Concatenates byte arrays. */
export function cat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let pos = 0;
  for (const part of parts) {
    out.set(part, pos);
    pos += part.length;
  }
  return out;
}

/** A varint of a non-negative integer. */
export function varint(value: number | bigint): Uint8Array {
  const bytes: number[] = [];
  let v = BigInt(value);
  do {
    const low = Number(v & 0x7fn);
    v >>= 7n;
    bytes.push(v > 0n ? low | 0x80 : low);
  } while (v > 0n);
  return Uint8Array.from(bytes);
}

/** A varint field (wire type 0). */
export function vint(field: number, value: number | bigint): Uint8Array {
  return cat(varint(field * 8), varint(value));
}

/** A length-delimited field (wire type 2) holding `payload`. */
export function len(field: number, ...payload: Uint8Array[]): Uint8Array {
  const body = cat(...payload);
  return cat(varint(field * 8 + 2), varint(body.length), body);
}

/** A length-delimited field holding a UTF-8 string. */
export function str(field: number, text: string): Uint8Array {
  return len(field, new TextEncoder().encode(text));
}

/** A 64-bit little-endian double field (wire type 1). */
export function dbl(field: number, value: number): Uint8Array {
  const body = new Uint8Array(8);
  new DataView(body.buffer).setFloat64(0, value, true);
  return cat(varint(field * 8 + 1), body);
}
