import assert from "node:assert/strict";
import { varint } from "./_test_bytes.ts";
import { lenFieldSize, utf8Bytes, varintFieldSize, varintSize, WireWriter } from "./_wire.ts";

Deno.test("WireWriter writes varints of every size like the reference encoding", () => {
  for (const value of [0, 1, 127, 128, 300, 16383, 16384, 2 ** 31 - 1, 2 ** 31, 2 ** 32, 2 ** 53 - 1]) {
    const w = new WireWriter(varintSize(value));
    assert.deepEqual(w.varint(value).finish(), varint(value), String(value));
  }
  const big = 2n ** 64n - 1n;
  assert.deepEqual(new WireWriter(varintSize(big)).varint(big).finish(), varint(big));
  assert.equal(varintSize(big), 10);
});

Deno.test("varintSize of a number agrees with the bigint count at every size boundary", () => {
  for (let bits = 7; bits <= 53; bits += 7) {
    for (
      const value of [2 ** bits - 1, 2 ** bits, 2 ** bits + 1].filter((v) => v <= Number.MAX_SAFE_INTEGER)
    ) {
      assert.equal(varintSize(value), varintSize(BigInt(value)), String(value));
      assert.equal(varintSize(value), varint(value).length, String(value));
    }
  }
});

Deno.test("WireWriter frames fields with sizes computed up front", () => {
  const payload = utf8Bytes("é");
  const w = new WireWriter(lenFieldSize(4, payload.length) + varintFieldSize(3, 1));
  w.lenField(4, payload).varintField(3, 1);
  assert.deepEqual(w.finish(), Uint8Array.of(0x22, 0x02, 0xc3, 0xa9, 0x18, 0x01));
  assert.equal(lenFieldSize(16, 0), 3, "field 16 needs a two-byte tag");
});

Deno.test("WireWriter.finish fails loudly when the computed size was wrong", () => {
  const w = new WireWriter(3);
  w.varint(1);
  assert.throws(() => w.finish(), {
    name: "RangeError",
    message: "Framing wrote 1 bytes into a buffer sized 3; sizes disagree",
  });
});
