import assert from "node:assert/strict";
import fc from "fast-check";
import {
  decodeDnsMessage,
  DNS_CLASS_IN,
  DNS_FLAG,
  DNS_TYPE,
  DnsFormatError,
  type DnsMessage,
  encodeDnsMessage,
  ipv6Bytes,
  MAX_COMPRESSION_POINTERS,
} from "./dns_message.ts";

const query = (name: string, type: number = DNS_TYPE.A): DnsMessage => ({
  id: 0x1234,
  flags: DNS_FLAG.rd,
  questions: [{ name, type, class: DNS_CLASS_IN }],
  answers: [],
  authorities: [],
  additionals: [],
});

Deno.test("a DNS message with A, AAAA and CNAME answers reads back as written", () => {
  const message: DnsMessage = {
    ...query("web.example.com."),
    flags: DNS_FLAG.qr | DNS_FLAG.aa | DNS_FLAG.rd,
    answers: [
      {
        name: "web.example.com.",
        type: DNS_TYPE.CNAME,
        class: DNS_CLASS_IN,
        ttl: 30,
        data: "app.example.com.",
      },
      { name: "app.example.com.", type: DNS_TYPE.A, class: DNS_CLASS_IN, ttl: 30, data: "10.1.2.3" },
      { name: "app.example.com.", type: DNS_TYPE.AAAA, class: DNS_CLASS_IN, ttl: 30, data: "2001:db8::1" },
      { name: "web.example.com.", type: 16, class: DNS_CLASS_IN, ttl: 5, data: Uint8Array.of(2, 104, 105) },
    ],
  };
  assert.deepEqual(decodeDnsMessage(encodeDnsMessage(message)), message);
});

Deno.test("DNS names are read case-insensitively, lower-cased", () => {
  assert.equal(
    decodeDnsMessage(encodeDnsMessage(query("WeB.Example.COM."))).questions[0].name,
    "web.example.com.",
  );
});

Deno.test("IPv6 addresses read back in their shortest form, an IPv4 tail included", () => {
  for (
    const [text, shortest] of [["2001:db8:0:0:0:0:0:1", "2001:db8::1"], ["::ffff:10.0.0.1", "::ffff:a00:1"]]
  ) {
    const message: DnsMessage = {
      ...query("a."),
      answers: [{ name: "a.", type: DNS_TYPE.AAAA, class: DNS_CLASS_IN, ttl: 1, data: text }],
    };
    assert.equal(decodeDnsMessage(encodeDnsMessage(message)).answers[0].data, shortest);
  }
  assert.throws(() => ipv6Bytes("1::2::3"), RangeError);
});

Deno.test("a DNS message shorter than its header, or cut inside a question, is a DnsFormatError", () => {
  const bytes = encodeDnsMessage(query("example.com."));
  assert.throws(() => decodeDnsMessage(bytes.subarray(0, 11)), DnsFormatError);
  assert.throws(() => decodeDnsMessage(bytes.subarray(0, bytes.length - 1)), DnsFormatError);
  assert.throws(() => decodeDnsMessage(Uint8Array.of(...bytes, 0)), DnsFormatError);
});

Deno.test("a compression pointer to itself or forward is a DnsFormatError, not a loop", () => {
  const header = [0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0];
  // The question's name is a pointer to offset 12: itself.
  assert.throws(() => decodeDnsMessage(Uint8Array.of(...header, 0xc0, 12, 0, 1, 0, 1)), DnsFormatError);
  // Two names pointing at each other: a label then a pointer to the second name, which points back.
  const loop = [
    ...header.slice(0, 5),
    2,
    ...header.slice(6),
    1,
    97,
    0xc0,
    20,
    0,
    1,
    0,
    1,
    0xc0,
    12,
    0,
    1,
    0,
    1,
  ];
  assert.throws(() => decodeDnsMessage(Uint8Array.from(loop)), DnsFormatError);
});

/**
 * A response whose one answer's data is a chain of `links` compression pointers, each to the one before (the
 * first to the answer's root name), followed by `names` authority records named by a pointer to the chain's end.
 */
function pointerChain(links: number, names: number): Uint8Array {
  const bytes = [0, 1, 0x80, 0, 0, 0, 0, 1, names >> 8, names & 0xff, 0, 0];
  bytes.push(0, 0, 99, 0, 1, 0, 0, 0, 0, (2 * links) >> 8, (2 * links) & 0xff);
  let last = 12;
  for (let i = 0; i < links; i++) {
    const here = bytes.length;
    bytes.push(0xc0 | (last >> 8), last & 0xff);
    last = here;
  }
  for (let i = 0; i < names; i++) bytes.push(0xc0 | (last >> 8), last & 0xff, 0, 99, 0, 1, 0, 0, 0, 0, 0, 0);
  return Uint8Array.from(bytes);
}

Deno.test("a name follows at most MAX_COMPRESSION_POINTERS pointers, as miekg/dns", () => {
  const read = decodeDnsMessage(pointerChain(MAX_COMPRESSION_POINTERS - 1, 1));
  assert.equal(read.authorities[0].name, ".", "the chain and the pointer into it");
  assert.throws(() => decodeDnsMessage(pointerChain(MAX_COMPRESSION_POINTERS, 1)), {
    name: "DnsFormatError",
    message: "Name follows more than 126 compression pointers",
  });
  // The largest chain a 14-bit pointer reaches, and 4,090 names walking it: 33 million steps, 60 ms, before.
  const quadratic = pointerChain(8_180, 4_090);
  assert.ok(quadratic.length <= 65_535);
  assert.throws(() => decodeDnsMessage(quadratic), DnsFormatError);
});

Deno.test("a name longer than 255 bytes is a DnsFormatError on reading and a RangeError on writing", () => {
  const long = `${Array.from({ length: 5 }, () => "a".repeat(63)).join(".")}.`;
  assert.throws(() => encodeDnsMessage(query(long)), RangeError);
  const labels = Array.from({ length: 5 }, () => [63, ...new Array(63).fill(97)]).flat();
  const header = [0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0];
  assert.throws(
    () => decodeDnsMessage(Uint8Array.from([...header, ...labels, 0, 0, 1, 0, 1])),
    DnsFormatError,
  );
});

Deno.test("decoding random bytes either succeeds or throws a DnsFormatError, nothing else", () => {
  const valid = encodeDnsMessage({
    ...query("a.b.example."),
    answers: [{ name: "c.example.", type: DNS_TYPE.CNAME, class: 1, ttl: 1, data: "a.b.example." }],
  });
  const check = (bytes: Uint8Array) => {
    try {
      decodeDnsMessage(bytes);
    } catch (error) {
      if (!(error instanceof DnsFormatError)) throw error;
    }
  };
  fc.assert(fc.property(fc.uint8Array({ maxLength: 600 }), check), { numRuns: 2000 });
  // Valid messages with bytes flipped reach the name and record readers far more often than noise.
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.nat(valid.length - 1), fc.integer({ min: 0, max: 255 }))), (flips) => {
      const bytes = valid.slice();
      for (const [at, value] of flips) bytes[at] = value;
      check(bytes);
    }),
    { numRuns: 2000 },
  );
});
