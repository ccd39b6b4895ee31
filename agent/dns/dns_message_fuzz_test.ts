import assert from "node:assert/strict";
import fc from "fast-check";
import {
  decodeDnsMessage,
  DNS_TYPE,
  DnsFormatError,
  type DnsMessage,
  firstQuestionEnd,
} from "./dns_message.ts";
import { mutatedMessage, wireMessage } from "./_dns_fuzz_inputs.ts";

/** The smallest a question (a root name, type, class) and a record (the same, TTL, data length) can be. */
const MIN_QUESTION_BYTES = 5;
const MIN_RECORD_BYTES = 11;

/** Decodes, letting only a DnsFormatError through as undefined. */
function decodeOrReject(bytes: Uint8Array): DnsMessage | undefined {
  try {
    return decodeDnsMessage(bytes);
  } catch (error) {
    if (error instanceof DnsFormatError) return undefined;
    throw error;
  }
}

/** Nothing read is made up from a count: every question and record read took its bytes of the message. */
function assertBackedByBytes(message: DnsMessage, bytes: Uint8Array): void {
  const records = message.answers.length + message.authorities.length + message.additionals.length;
  assert.ok(
    12 + MIN_QUESTION_BYTES * message.questions.length + MIN_RECORD_BYTES * records <= bytes.length,
    `${message.questions.length} questions and ${records} records read from ${bytes.length} bytes`,
  );
}

Deno.test("every well-formed message, compressed or not, reads back with the sections it was written with", () => {
  fc.assert(
    fc.property(wireMessage, ({ bytes, questions, records }) => {
      const message = decodeDnsMessage(bytes);
      assert.equal(message.questions.length, questions);
      assert.deepEqual(
        [message.answers.length, message.authorities.length, message.additionals.length],
        records,
      );
      for (const record of [...message.answers, ...message.authorities, ...message.additionals]) {
        if (record.type === DNS_TYPE.A || record.type === DNS_TYPE.AAAA || record.type === DNS_TYPE.CNAME) {
          assert.equal(typeof record.data, "string");
        }
        assert.ok(record.name.endsWith("."));
      }
      if (questions > 0) assert.ok(firstQuestionEnd(bytes) <= bytes.length);
    }),
    { seed: 42, numRuns: 1_500 },
  );
});

Deno.test("a mutated message reads, or is a DnsFormatError, and never holds more than its bytes", () => {
  fc.assert(
    fc.property(mutatedMessage, (bytes) => {
      const message = decodeOrReject(bytes);
      if (message !== undefined) assertBackedByBytes(message, bytes);
      try {
        assert.ok(firstQuestionEnd(bytes) <= bytes.length);
      } catch (error) {
        if (!(error instanceof DnsFormatError)) throw error;
      }
    }),
    { seed: 42, numRuns: 3_000 },
  );
});

Deno.test("counts of 65,535 over few bytes are a DnsFormatError, whatever the bytes", () => {
  fc.assert(
    fc.property(fc.nat(3), fc.uint8Array({ maxLength: 2_000 }), (section, body) => {
      const header = new Uint8Array(12);
      new DataView(header.buffer).setUint16(4 + 2 * section, 65_535);
      assert.throws(() => decodeDnsMessage(Uint8Array.of(...header, ...body)), DnsFormatError);
    }),
    { seed: 42, numRuns: 1_000 },
  );
});
