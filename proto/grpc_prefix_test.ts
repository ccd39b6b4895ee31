import assert from "node:assert/strict";
import fc from "fast-check";
import { GRPC_PREFIX_BYTES, grpcFrameOf, writeGrpcPrefix } from "./grpc_prefix.ts";
import { WireWriter } from "./_wire.ts";

/** What gRPC writes for an uncompressed message: flag 0, big-endian length, the message. */
function referenceFrame(message: Uint8Array): Uint8Array {
  const frame = new Uint8Array(GRPC_PREFIX_BYTES + message.length);
  new DataView(frame.buffer).setUint32(1, message.length);
  frame.set(message, GRPC_PREFIX_BYTES);
  return frame;
}

Deno.test("grpcFrameOf gives the prefixed message as a view of the same memory", () => {
  fc.assert(fc.property(fc.uint8Array({ maxLength: 600 }), (payload) => {
    const w = new WireWriter(payload.length, { grpcPrefix: true });
    const message = w.raw(payload).finish();
    assert.deepEqual(message, payload, "the finished message is the message alone");
    const frame = grpcFrameOf(message);
    assert.ok(frame !== undefined);
    assert.equal(frame.buffer, message.buffer);
    assert.deepEqual(frame, referenceFrame(payload));
  }));
});

Deno.test("grpcFrameOf reads lengths that use all four prefix bytes", () => {
  const buffer = new Uint8Array(GRPC_PREFIX_BYTES + 0x0102_0304);
  writeGrpcPrefix(buffer, 0, 0x0102_0304);
  assert.deepEqual([...buffer.subarray(0, 5)], [0, 1, 2, 3, 4]);
  assert.equal(grpcFrameOf(buffer.subarray(GRPC_PREFIX_BYTES))?.length, buffer.length);
});

Deno.test("grpcFrameOf refuses a message without its prefix in front", () => {
  const plain = Uint8Array.of(1, 2, 3);
  assert.equal(grpcFrameOf(plain), undefined, "nothing in front");
  const shifted = new Uint8Array(16);
  assert.equal(grpcFrameOf(shifted.subarray(3, 6)), undefined, "fewer than five bytes in front");
  writeGrpcPrefix(shifted, 0, 4);
  assert.equal(grpcFrameOf(shifted.subarray(5, 8)), undefined, "a prefix of another length");
  assert.ok(grpcFrameOf(shifted.subarray(5, 9)) !== undefined, "the length it holds");
  shifted[0] = 1;
  assert.equal(grpcFrameOf(shifted.subarray(5, 9)), undefined, "a compressed flag");
});

Deno.test("writeGrpcPrefix names a length or offset it cannot write", () => {
  assert.throws(
    () => writeGrpcPrefix(new Uint8Array(8), 0, 2 ** 32),
    /length 4294967296: expected an integer/,
  );
  assert.throws(() => writeGrpcPrefix(new Uint8Array(8), 4, 1), /offset 4: expected 0\.\.3/);
});

Deno.test("WireWriter with a gRPC prefix names the message's own sizes when they disagree", () => {
  const w = new WireWriter(4, { grpcPrefix: true });
  w.raw(Uint8Array.of(1, 2, 3));
  assert.throws(() => w.finish(), /wrote 3 bytes into a buffer sized 4/);
});
