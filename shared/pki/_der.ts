// A minimal DER reader and writer: just enough to recognise key algorithms and to wrap PKCS#1 / SEC1 keys
// into PKCS#8, which is the only private-key format WebCrypto imports.

/** ASN.1 universal tags used by the key formats we read. */
export const TAG = {
  integer: 0x02,
  octetString: 0x04,
  null: 0x05,
  oid: 0x06,
  sequence: 0x30,
} as const;

/** One DER element: its tag, where its contents are, and where the next element starts. */
export interface DerElement {
  readonly tag: number;
  readonly contents: Uint8Array;
  readonly end: number;
}

/** Reads the element starting at `offset`; throws SyntaxError naming `what` on truncated or malformed input. */
export function readElement(bytes: Uint8Array, offset: number, what: string): DerElement {
  if (offset + 2 > bytes.length) throw new SyntaxError(`Truncated DER in ${what} at byte ${offset}`);
  const tag = bytes[offset];
  let length = bytes[offset + 1];
  let start = offset + 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0 || count > 4 || start + count > bytes.length) {
      throw new SyntaxError(`Invalid DER length in ${what} at byte ${offset}`);
    }
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + bytes[start + i];
    start += count;
  }
  const end = start + length;
  if (end > bytes.length) throw new SyntaxError(`Truncated DER in ${what} at byte ${offset}`);
  return { tag, contents: bytes.subarray(start, end), end };
}

/** The child elements of a constructed element's contents. */
export function readChildren(contents: Uint8Array, what: string): DerElement[] {
  const children: DerElement[] = [];
  let offset = 0;
  while (offset < contents.length) {
    const child = readElement(contents, offset, what);
    children.push(child);
    offset = child.end;
  }
  return children;
}

/** Decodes OBJECT IDENTIFIER contents to dotted form (`1.2.840.10045.2.1`). */
export function decodeOid(contents: Uint8Array): string {
  if (contents.length === 0) throw new SyntaxError("Empty DER object identifier");
  const parts: number[] = [];
  let value = 0;
  for (const byte of contents) {
    value = value * 128 + (byte & 0x7f);
    if (!(byte & 0x80)) {
      parts.push(value);
      value = 0;
    }
  }
  const first = parts.shift()!;
  const head = first < 80 ? [Math.floor(first / 40), first % 40] : [2, first - 80];
  return [...head, ...parts].join(".");
}

/** Encodes a dotted OBJECT IDENTIFIER as a full DER element. */
export function encodeOid(oid: string): Uint8Array {
  const parts = oid.split(".").map(Number);
  const body: number[] = [];
  const arcs = [parts[0] * 40 + parts[1], ...parts.slice(2)];
  for (const arc of arcs) {
    const chunk = [arc & 0x7f];
    for (let rest = Math.floor(arc / 128); rest > 0; rest = Math.floor(rest / 128)) {
      chunk.unshift((rest & 0x7f) | 0x80);
    }
    body.push(...chunk);
  }
  return encodeElement(TAG.oid, Uint8Array.from(body));
}

/** Encodes one element from its tag and contents. */
export function encodeElement(tag: number, contents: Uint8Array): Uint8Array<ArrayBuffer> {
  const length = contents.length;
  let header: number[];
  if (length < 0x80) {
    header = [tag, length];
  } else {
    const lengthBytes: number[] = [];
    for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) lengthBytes.unshift(rest & 0xff);
    header = [tag, 0x80 | lengthBytes.length, ...lengthBytes];
  }
  const out = new Uint8Array(header.length + length);
  out.set(header);
  out.set(contents, header.length);
  return out;
}

/** Encodes a SEQUENCE of already-encoded elements. */
export function encodeSequence(...elements: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const total = elements.reduce((sum, e) => sum + e.length, 0);
  const contents = new Uint8Array(total);
  let offset = 0;
  for (const element of elements) {
    contents.set(element, offset);
    offset += element.length;
  }
  return encodeElement(TAG.sequence, contents);
}
