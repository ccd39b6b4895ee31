/**
 * The DNS wire format (RFC 1035) as far as the agent's DNS proxy needs it: the header, questions, and resource
 * records with A, AAAA and CNAME data decoded (any other type's data kept as bytes). Reading follows name
 * compression with bounds checks and a loop guard: a pointer must point before the name it is part of, so a
 * name can never revisit itself, and a name follows at most {@link MAX_COMPRESSION_POINTERS}. Every problem of the input is a {@link DnsFormatError}; nothing else throws.
 *
 * @module
 */

/** Record types the proxy answers or reads. */
import { formatIp, parseIpv4, parseIpv6 } from "../iptables/cidr.ts";
export const DNS_TYPE = { A: 1, CNAME: 5, AAAA: 28, OPT: 41 } as const;

/** The Internet class. */
export const DNS_CLASS_IN = 1;

/** Response codes the proxy sends. */
export const DNS_RCODE = { noError: 0, formErr: 1, servFail: 2, nxDomain: 3 } as const;

/** The smallest message every resolver takes over UDP (RFC 1035 §4.2.1). */
export const DNS_MIN_UDP_BYTES = 512;

/** The largest message over TCP: its length prefix is 16 bits. */
export const DNS_MAX_MESSAGE_BYTES = 65_535;

const HEADER_BYTES = 12;
const MAX_NAME_BYTES = 255;
const MAX_LABEL_BYTES = 63;
/**
 * Compression pointers one name may follow (miekg/dns's bound): enough for a 255-byte name of one-letter labels
 * each behind a pointer. Unbounded, a chain of pointers each to the one before made every name pointing at its
 * end walk it whole: a 64 KiB message of such names took 60 ms to read, quadratic in its size.
 */
export const MAX_COMPRESSION_POINTERS = 126;

/** Header flag bits. */
export const DNS_FLAG = { qr: 0x8000, aa: 0x0400, tc: 0x0200, rd: 0x0100, ra: 0x0080 } as const;

/** Bytes that are not a DNS message, or not one the codec can read; `offset` is where reading stopped. */
export class DnsFormatError extends Error {
  override readonly name = "DnsFormatError";
  /** Creates the error; `offset` is the byte where the problem was found. */
  constructor(message: string, readonly offset: number) {
    super(message);
  }
}

/** One question. Names are absolute, lower-case, with a trailing dot (`example.com.`; the root is `.`). */
export interface DnsQuestion {
  readonly name: string;
  readonly type: number;
  readonly class: number;
}

/** One resource record; `data` is the address (A, AAAA), the target name (CNAME) or the raw bytes. */
export interface DnsRecord {
  readonly name: string;
  readonly type: number;
  readonly class: number;
  readonly ttl: number;
  readonly data: string | Uint8Array;
}

/** A whole message. */
export interface DnsMessage {
  readonly id: number;
  /** The 16 flag bits of the header, rcode included. */
  readonly flags: number;
  readonly questions: readonly DnsQuestion[];
  readonly answers: readonly DnsRecord[];
  readonly authorities: readonly DnsRecord[];
  readonly additionals: readonly DnsRecord[];
}

/** The rcode of a message's flags. */
export function rcodeOf(flags: number): number {
  return flags & 0xf;
}

/** The UDP payload size a query's EDNS OPT record advertises, or undefined without one. */
export function ednsUdpSize(message: DnsMessage): number | undefined {
  return message.additionals.find((r) => r.type === DNS_TYPE.OPT)?.class;
}

/**
 * Reads a message.
 *
 * @throws {DnsFormatError} when the bytes are truncated, a name is too long or loops, or bytes follow the end
 */
export function decodeDnsMessage(bytes: Uint8Array): DnsMessage {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < HEADER_BYTES) {
    throw new DnsFormatError(`DNS message of ${bytes.length} bytes: expected a 12-byte header at least`, 0);
  }
  const counts = [view.getUint16(4), view.getUint16(6), view.getUint16(8), view.getUint16(10)];
  let offset = HEADER_BYTES;
  const questions: DnsQuestion[] = [];
  for (let i = 0; i < counts[0]; i++) {
    const name = readName(bytes, offset);
    offset = need(bytes, name.end, 4);
    questions.push({ name: name.name, type: view.getUint16(name.end), class: view.getUint16(name.end + 2) });
  }
  const sections: DnsRecord[][] = [[], [], []];
  for (let s = 0; s < 3; s++) {
    for (let i = 0; i < counts[s + 1]; i++) {
      const name = readName(bytes, offset);
      const start = need(bytes, name.end, 10);
      const type = view.getUint16(name.end);
      const length = view.getUint16(name.end + 8);
      offset = need(bytes, start, length);
      sections[s].push({
        name: name.name,
        type,
        class: view.getUint16(name.end + 2),
        ttl: view.getUint32(name.end + 4),
        data: recordData(bytes, type, start, length),
      });
    }
  }
  if (offset !== bytes.length) {
    throw new DnsFormatError(`${bytes.length - offset} bytes after the last record`, offset);
  }
  return {
    id: view.getUint16(0),
    flags: view.getUint16(2),
    questions,
    answers: sections[0],
    authorities: sections[1],
    additionals: sections[2],
  };
}

/** Returns `offset + length`, or throws when the message ends before. */
function need(bytes: Uint8Array, offset: number, length: number): number {
  if (offset + length > bytes.length) {
    throw new DnsFormatError(
      `DNS message ends at byte ${bytes.length}: expected ${length} more bytes`,
      offset,
    );
  }
  return offset + length;
}

function recordData(bytes: Uint8Array, type: number, start: number, length: number): string | Uint8Array {
  if ((type === DNS_TYPE.A && length === 4) || (type === DNS_TYPE.AAAA && length === 16)) {
    return formatIp([...bytes.subarray(start, start + length)]);
  }
  if (type === DNS_TYPE.CNAME) {
    const target = readName(bytes, start);
    if (target.end !== start + length) {
      throw new DnsFormatError("CNAME data length differs from its name", start);
    }
    return target.name;
  }
  return bytes.slice(start, start + length);
}

/** Reads a possibly compressed name at `offset`; `end` is where the record continues. */
function readName(bytes: Uint8Array, offset: number): { name: string; end: number } {
  const labels: string[] = [];
  let length = 1;
  let at = offset;
  let end = -1;
  // Every pointer must go strictly before the start of the labels it continues: no name can loop.
  let floor = offset;
  let pointers = 0;
  for (;;) {
    if (at >= bytes.length) throw new DnsFormatError("Name runs past the end of the message", at);
    const size = bytes[at];
    if (size === 0) {
      if (end < 0) end = at + 1;
      break;
    }
    const kind = size & 0xc0;
    if (kind === 0xc0) {
      if (at + 1 >= bytes.length) throw new DnsFormatError("Compression pointer runs past the end", at);
      const target = ((size & 0x3f) << 8) | bytes[at + 1];
      if (target >= floor) {
        throw new DnsFormatError(`Compression pointer to ${target} does not point backwards`, at);
      }
      if (++pointers > MAX_COMPRESSION_POINTERS) {
        throw new DnsFormatError(
          `Name follows more than ${MAX_COMPRESSION_POINTERS} compression pointers`,
          at,
        );
      }
      if (end < 0) end = at + 2;
      floor = target;
      at = target;
      continue;
    }
    if (kind !== 0) throw new DnsFormatError(`Label type 0x${kind.toString(16)} is not supported`, at);
    if (at + 1 + size > bytes.length) throw new DnsFormatError("Label runs past the end of the message", at);
    length += size + 1;
    if (length > MAX_NAME_BYTES) {
      throw new DnsFormatError(`Name longer than ${MAX_NAME_BYTES} bytes`, at);
    }
    labels.push(labelText(bytes.subarray(at + 1, at + 1 + size)));
    at += size + 1;
  }
  return { name: labels.length === 0 ? "." : `${labels.join(".")}.`.toLowerCase(), end };
}

/** A label as text: printable ASCII as is, dots and other bytes escaped as `\DDD` (RFC 4343). */
function labelText(label: Uint8Array): string {
  let out = "";
  for (const byte of label) {
    out += byte > 0x20 && byte < 0x7f && byte !== 0x2e && byte !== 0x5c
      ? String.fromCharCode(byte)
      : `\\${byte.toString().padStart(3, "0")}`;
  }
  return out;
}

/**
 * Writes a message. Names are written uncompressed except a record named like the first question, which points
 * at it. Record data of A, AAAA and CNAME is given as text, any other as bytes.
 *
 * @throws {RangeError} when a name, address or the message does not fit the format
 */
export function encodeDnsMessage(message: DnsMessage): Uint8Array {
  const out = new Writer();
  out.u16(message.id).u16(message.flags).u16(message.questions.length).u16(message.answers.length)
    .u16(message.authorities.length).u16(message.additionals.length);
  const first = message.questions[0]?.name;
  for (const question of message.questions) out.name(question.name).u16(question.type).u16(question.class);
  for (const record of [...message.answers, ...message.authorities, ...message.additionals]) {
    writeRecord(out, record, first);
  }
  const bytes = out.finish();
  if (bytes.length > DNS_MAX_MESSAGE_BYTES) {
    throw new RangeError(`DNS message of ${bytes.length} bytes: expected at most ${DNS_MAX_MESSAGE_BYTES}`);
  }
  return bytes;
}

/**
 * Records encoded as they follow a question named `questionName` at offset 12: what a reply to a one-question
 * query carries after the question, ready to be appended to it.
 *
 * @throws {RangeError} when a name or address does not fit the format
 */
export function encodeRecords(records: readonly DnsRecord[], questionName: string): Uint8Array {
  const out = new Writer();
  for (const record of records) writeRecord(out, record, questionName);
  return out.finish();
}

/**
 * Where the first question of a message ends (after its class), for copying it as it came.
 *
 * @throws {DnsFormatError} when the message has no readable first question
 */
export function firstQuestionEnd(bytes: Uint8Array): number {
  return need(bytes, readName(bytes, HEADER_BYTES).end, 4);
}

function writeRecord(out: Writer, record: DnsRecord, questionName: string | undefined): void {
  if (record.name === questionName) out.u16(0xc000 | HEADER_BYTES);
  else out.name(record.name);
  out.u16(record.type).u16(record.class).u32(record.ttl);
  const data = recordBytes(record);
  out.u16(data.length).bytes(data);
}

function recordBytes(record: DnsRecord): Uint8Array {
  if (typeof record.data !== "string") return record.data;
  if (record.type === DNS_TYPE.A) return ipv4Bytes(record.data);
  if (record.type === DNS_TYPE.AAAA) return ipv6Bytes(record.data);
  return new Writer().name(record.data).finish();
}

/**
 * The four bytes of a dotted IPv4 address.
 *
 * @throws {RangeError} when the text is not one
 */
export function ipv4Bytes(text: string): Uint8Array {
  const bytes = parseIpv4(text);
  if (!bytes) {
    throw new RangeError(`Invalid IPv4 address "${text.slice(0, 64)}": expected four numbers 0 to 255`);
  }
  return Uint8Array.from(bytes);
}

/**
 * The sixteen bytes of an IPv6 address (`::` and an embedded IPv4 tail accepted; no zone).
 *
 * @throws {RangeError} when the text is not one
 */
export function ipv6Bytes(text: string): Uint8Array {
  const bytes = parseIpv6(text);
  if (!bytes) throw new RangeError(`Invalid IPv6 address "${text.slice(0, 64)}": expected RFC 4291 text`);
  return Uint8Array.from(bytes);
}

const UTF8 = new TextEncoder();

class Writer {
  #buffer = new Uint8Array(512);
  #length = 0;

  #room(n: number): void {
    if (this.#length + n <= this.#buffer.length) return;
    const next = new Uint8Array(Math.max(this.#buffer.length * 2, this.#length + n));
    next.set(this.#buffer.subarray(0, this.#length));
    this.#buffer = next;
  }

  u16(value: number): this {
    this.#room(2);
    this.#buffer[this.#length++] = (value >> 8) & 0xff;
    this.#buffer[this.#length++] = value & 0xff;
    return this;
  }

  u32(value: number): this {
    return this.u16(Math.floor(value / 0x10000) & 0xffff).u16(value & 0xffff);
  }

  bytes(data: Uint8Array): this {
    this.#room(data.length);
    this.#buffer.set(data, this.#length);
    this.#length += data.length;
    return this;
  }

  name(name: string): this {
    const labels = name === "." || name === "" ? [] : name.replace(/\.$/, "").split(".");
    let total = 1;
    for (const label of labels) {
      const bytes = UTF8.encode(label);
      if (bytes.length === 0 || bytes.length > MAX_LABEL_BYTES) {
        throw new RangeError(`Invalid DNS name "${name.slice(0, 64)}": labels are 1 to 63 bytes`);
      }
      total += bytes.length + 1;
      this.#room(bytes.length + 1);
      this.#buffer[this.#length++] = bytes.length;
      this.bytes(bytes);
    }
    if (total > MAX_NAME_BYTES) {
      throw new RangeError(`Invalid DNS name "${name.slice(0, 64)}": longer than ${MAX_NAME_BYTES} bytes`);
    }
    this.#room(1);
    this.#buffer[this.#length++] = 0;
    return this;
  }

  finish(): Uint8Array {
    return this.#buffer.slice(0, this.#length);
  }
}
