/**
 * Test support for fuzzing the DNS codec and proxy: real queries and answers written byte by byte (A, AAAA,
 * CNAME, SRV, PTR, TXT and OPT records, names compressed against any name written before), and mutations of
 * them that reach the name and record readers far more often than random bytes do.
 *
 * @module
 */
import fc from "fast-check";

/** Types the generated records have. */
const TYPES = { A: 1, CNAME: 5, PTR: 12, TXT: 16, AAAA: 28, SRV: 33, OPT: 41 } as const;

/** A label: mostly host-name letters, sometimes any byte. */
const label: fc.Arbitrary<Uint8Array> = fc.oneof(
  { weight: 4, arbitrary: fc.stringMatching(/^[a-zA-Z0-9-]{1,12}$/).map((s) => new TextEncoder().encode(s)) },
  { weight: 1, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 63 }) },
);

/** A name as its labels, the root being none. */
const name: fc.Arbitrary<Uint8Array[]> = fc.array(label, { maxLength: 4 });

/** What each generated record holds, before it is written. */
type RecordPlan =
  | { kind: "address"; type: 1 | 28; bytes: Uint8Array }
  | { kind: "name"; type: 5 | 12; target: Uint8Array[] }
  | { kind: "srv"; priority: number; weight: number; port: number; target: Uint8Array[] }
  | { kind: "txt"; strings: Uint8Array[] }
  | { kind: "opt"; udpSize: number; options: [number, Uint8Array][] };

const recordPlan: fc.Arbitrary<RecordPlan> = fc.oneof(
  fc.uint8Array({ minLength: 4, maxLength: 4 }).map((bytes) =>
    ({ kind: "address", type: 1, bytes }) as const
  ),
  fc.uint8Array({ minLength: 16, maxLength: 16 }).map((bytes) =>
    ({ kind: "address", type: 28, bytes }) as const
  ),
  fc.tuple(fc.constantFrom(5 as const, 12 as const), name).map(([type, target]) =>
    ({
      kind: "name",
      type,
      target,
    }) as const
  ),
  fc.record({
    kind: fc.constant("srv" as const),
    priority: fc.nat(65_535),
    weight: fc.nat(65_535),
    port: fc.nat(65_535),
    target: name,
  }),
  fc.record({
    kind: fc.constant("txt" as const),
    strings: fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 3 }),
  }),
  fc.record({
    kind: fc.constant("opt" as const),
    udpSize: fc.nat(65_535),
    options: fc.array(fc.tuple(fc.nat(65_535), fc.uint8Array({ maxLength: 20 })), { maxLength: 3 }),
  }),
);

/** A generated message: its bytes and what they hold. */
export interface WireMessage {
  readonly bytes: Uint8Array;
  readonly questions: number;
  readonly records: readonly [number, number, number];
}

/** Writes names, pointing each suffix already written at its first place when `compress` says so. */
class WireWriter {
  readonly bytes: number[] = [];
  readonly #suffixes = new Map<string, number>();

  constructor(readonly compress: () => boolean) {}

  u16(value: number): void {
    this.bytes.push((value >> 8) & 0xff, value & 0xff);
  }

  u32(value: number): void {
    this.u16(Math.floor(value / 0x10000));
    this.u16(value & 0xffff);
  }

  name(labels: readonly Uint8Array[]): void {
    for (let i = 0; i < labels.length; i++) {
      const key = labels.slice(i).map((l) => [...l].join(",")).join("|").toLowerCase();
      const at = this.#suffixes.get(key);
      if (at !== undefined && this.compress()) {
        this.u16(0xc000 | at);
        return;
      }
      if (this.bytes.length < 0x4000) this.#suffixes.set(key, this.bytes.length);
      this.bytes.push(labels[i].length, ...labels[i]);
    }
    this.bytes.push(0);
  }

  /** Writes a record's type to its data, the data's length filled in once written. */
  record(owner: readonly Uint8Array[], plan: RecordPlan, ttl: number): void {
    this.name(plan.kind === "opt" ? [] : owner);
    const type = plan.kind === "address" || plan.kind === "name"
      ? plan.type
      : { srv: TYPES.SRV, txt: TYPES.TXT, opt: TYPES.OPT }[plan.kind];
    this.u16(type);
    this.u16(plan.kind === "opt" ? plan.udpSize : 1);
    this.u32(ttl);
    const lengthAt = this.bytes.length;
    this.u16(0);
    switch (plan.kind) {
      case "address":
        this.bytes.push(...plan.bytes);
        break;
      case "name":
        this.name(plan.target);
        break;
      case "srv":
        this.u16(plan.priority);
        this.u16(plan.weight);
        this.u16(plan.port);
        this.name(plan.target);
        break;
      case "txt":
        for (const s of plan.strings) this.bytes.push(s.length, ...s);
        break;
      case "opt":
        for (const [code, data] of plan.options) {
          this.u16(code);
          this.u16(data.length);
          this.bytes.push(...data);
        }
    }
    const length = this.bytes.length - lengthAt - 2;
    this.bytes[lengthAt] = length >> 8;
    this.bytes[lengthAt + 1] = length & 0xff;
  }
}

/** Well-formed queries and responses: 0 to 3 questions, 0 to 6 records a section, compressed at random. */
export const wireMessage: fc.Arbitrary<WireMessage> = fc.record({
  id: fc.nat(65_535),
  flags: fc.nat(65_535),
  questions: fc.array(fc.tuple(name, fc.constantFrom(...Object.values(TYPES)), fc.constantFrom(1, 3, 255)), {
    maxLength: 3,
  }),
  sections: fc.tuple(
    ...[0, 1, 2].map(() => fc.array(fc.tuple(name, recordPlan, fc.nat()), { maxLength: 6 })),
  ),
  compression: fc.array(fc.boolean(), { minLength: 1, maxLength: 16 }),
}).map(({ id, flags, questions, sections, compression }) => {
  let turn = 0;
  const out = new WireWriter(() => compression[turn++ % compression.length]);
  for (const value of [id, flags, questions.length, ...sections.map((s) => s.length)]) out.u16(value);
  for (const [owner, type, klass] of questions) {
    out.name(owner);
    out.u16(type);
    out.u16(klass);
  }
  for (const section of sections) for (const [owner, plan, ttl] of section) out.record(owner, plan, ttl);
  return {
    bytes: Uint8Array.from(out.bytes),
    questions: questions.length,
    records: [sections[0].length, sections[1].length, sections[2].length] as const,
  };
});

/** One change to a message's bytes. */
type Mutation =
  | { kind: "set"; at: number; value: number }
  | { kind: "pointer"; at: number; target: number }
  | { kind: "count"; section: number; value: number }
  | { kind: "cut"; at: number }
  | { kind: "insert"; at: number; bytes: Uint8Array }
  | { kind: "delete"; at: number; length: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("set" as const), at: fc.nat(), value: fc.nat(255) }),
  fc.record({ kind: fc.constant("pointer" as const), at: fc.nat(), target: fc.nat(0x3fff) }),
  fc.record({
    kind: fc.constant("count" as const),
    section: fc.nat(3),
    value: fc.oneof(fc.nat(8), fc.constant(65_535), fc.nat(65_535)),
  }),
  fc.record({ kind: fc.constant("cut" as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant("insert" as const),
    at: fc.nat(),
    bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }),
  }),
  fc.record({ kind: fc.constant("delete" as const), at: fc.nat(), length: fc.integer({ min: 1, max: 8 }) }),
);

/** `bytes` with `mutations` applied in turn; positions wrap around the current length. */
export function mutate(bytes: Uint8Array, mutations: readonly Mutation[]): Uint8Array {
  let out = [...bytes];
  for (const m of mutations) {
    const at = out.length === 0 ? 0 : ("at" in m ? m.at % out.length : 0);
    switch (m.kind) {
      case "set":
        if (out.length > 0) out[at] = m.value;
        break;
      case "pointer":
        out.splice(at, 2, 0xc0 | (m.target >> 8), m.target & 0xff);
        break;
      case "count":
        if (out.length >= 12) out.splice(4 + 2 * m.section, 2, m.value >> 8, m.value & 0xff);
        break;
      case "cut":
        out = out.slice(0, at);
        break;
      case "insert":
        out.splice(at, 0, ...m.bytes);
        break;
      case "delete":
        out.splice(at, m.length);
    }
  }
  return Uint8Array.from(out);
}

/** A generated message with one to six mutations. */
export const mutatedMessage: fc.Arbitrary<Uint8Array> = fc
  .tuple(wireMessage, fc.array(mutation, { minLength: 1, maxLength: 6 }))
  .map(([message, mutations]) => mutate(message.bytes, mutations));
