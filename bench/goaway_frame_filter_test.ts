import assert from "node:assert/strict";
import { cat } from "../proto/_test_bytes.ts";
import { CLIENT_PREFACE_BYTES, type GoawayFrame, GoawayFrameFilter } from "./goaway_frame_filter.ts";

const PREFACE = new TextEncoder().encode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
const SETTINGS = 4, HEADERS = 1, DATA = 0, PING = 6, GOAWAY = 7;

function frame(type: number, payload: Uint8Array, stream = 0): Uint8Array {
  const out = new Uint8Array(9 + payload.length);
  out[0] = payload.length >> 16;
  out[1] = (payload.length >> 8) & 0xff;
  out[2] = payload.length & 0xff;
  out[3] = type;
  new DataView(out.buffer).setUint32(5, stream);
  out.set(payload, 9);
  return out;
}

function goaway(lastStreamId: number, code: number, debug = new Uint8Array()): Uint8Array {
  const payload = new Uint8Array(8 + debug.length);
  const view = new DataView(payload.buffer);
  view.setUint32(0, lastStreamId);
  view.setUint32(4, code);
  payload.set(debug, 8);
  return frame(GOAWAY, payload);
}

/** Feeds `chunks` through a fresh filter; what it kept, joined, and the GOAWAYs it reported. */
function run(prefaceBytes: number, chunks: readonly Uint8Array[]) {
  const reported: GoawayFrame[] = [];
  const filter = new GoawayFrameFilter(prefaceBytes, (g) => reported.push(g));
  const kept = chunks.map((c) => filter.filter(c)).filter((k) => k !== undefined);
  return { kept: cat(...kept), reported };
}

const settings = frame(SETTINGS, new Uint8Array(6).fill(1));
const headers = frame(HEADERS, new Uint8Array(40).fill(2), 1);
const data = frame(DATA, new Uint8Array(300).fill(3), 1);
const ping = frame(PING, new Uint8Array(8).fill(9));
const leaving = goaway(0x80000007, 0, new TextEncoder().encode("bye"));

Deno.test("GoawayFrameFilter hands back a chunk without a GOAWAY as the same array", () => {
  const filter = new GoawayFrameFilter(CLIENT_PREFACE_BYTES, () => assert.fail("no GOAWAY was sent"));
  const chunk = cat(PREFACE, settings, headers, data);
  assert.equal(filter.filter(chunk), chunk);
  assert.equal(filter.filter(ping), ping);
});

Deno.test("GoawayFrameFilter leaves a GOAWAY out and reports its code, last stream and debug data", () => {
  const { kept, reported } = run(CLIENT_PREFACE_BYTES, [
    cat(PREFACE, settings, headers, leaving, data, ping),
  ]);
  assert.deepEqual(kept, cat(PREFACE, settings, headers, data, ping));
  assert.equal(reported.length, 1);
  assert.equal(reported[0].code, 0);
  assert.equal(reported[0].lastStreamId, 7, "the reserved bit is not part of the stream id");
  assert.equal(new TextDecoder().decode(reported[0].debugData), "bye");
});

Deno.test("GoawayFrameFilter reads a preface's GOAWAY-like bytes as preface, and a client's input from its first byte", () => {
  // A type byte of 7 inside the preface is not a frame: only what follows it is.
  const fakePreface = new Uint8Array(CLIENT_PREFACE_BYTES).fill(7);
  const server = run(CLIENT_PREFACE_BYTES, [cat(fakePreface, leaving, settings)]);
  assert.deepEqual(server.kept, cat(fakePreface, settings));
  assert.equal(server.reported.length, 1);
  const client = run(0, [cat(settings, goaway(3, 2), ping)]);
  assert.deepEqual(client.kept, cat(settings, ping));
  assert.deepEqual(client.reported.map((g) => [g.code, g.lastStreamId]), [[2, 3]]);
});

Deno.test("GoawayFrameFilter keeps the same bytes and GOAWAYs whatever two places the input is split at", () => {
  const input = cat(PREFACE, settings, leaving, headers, data, goaway(1, 11), ping);
  const expected = cat(PREFACE, settings, headers, data, ping);
  for (let a = 0; a <= input.length; a++) {
    for (let b = a; b <= input.length; b += 3) {
      const { kept, reported } = run(CLIENT_PREFACE_BYTES, [
        input.subarray(0, a),
        input.subarray(a, b),
        input.subarray(b),
      ]);
      assert.deepEqual(kept, expected, `split at ${a} and ${b}`);
      assert.deepEqual(reported.map((g) => g.code), [0, 11], `split at ${a} and ${b}`);
    }
  }
});

Deno.test("GoawayFrameFilter passes a stream fed a byte at a time unchanged but for its GOAWAY", () => {
  const input = cat(PREFACE, headers, leaving, data);
  const { kept, reported } = run(CLIENT_PREFACE_BYTES, [...input].map((b) => Uint8Array.of(b)));
  assert.deepEqual(kept, cat(PREFACE, headers, data));
  assert.equal(reported.length, 1);
});

Deno.test("GoawayFrameFilter keeps 256 bytes of a long GOAWAY's debug data and reads past the rest", () => {
  const debug = new Uint8Array(100_000).map((_, i) => i % 251);
  const { kept, reported } = run(0, [cat(goaway(5, 0, debug), ping)]);
  assert.deepEqual(kept, ping);
  assert.equal(reported.length, 1);
  assert.deepEqual(reported[0].debugData, debug.subarray(0, 256));
});

Deno.test("GoawayFrameFilter leaves a malformed GOAWAY out without reporting it", () => {
  const short = frame(GOAWAY, new Uint8Array(4));
  const empty = frame(GOAWAY, new Uint8Array());
  const { kept, reported } = run(0, [cat(settings, short, empty, ping)]);
  assert.deepEqual(kept, cat(settings, ping));
  assert.equal(reported.length, 0);
});

Deno.test("GoawayFrameFilter returns nothing for a chunk that was all GOAWAY", () => {
  const filter = new GoawayFrameFilter(0, () => {});
  assert.equal(filter.filter(leaving.subarray(0, 5)), undefined, "a header not yet whole is held back");
  assert.equal(filter.filter(leaving.subarray(5)), undefined);
  assert.equal(filter.filter(ping), ping);
});

Deno.test("GoawayFrameFilter refuses a preface that is not a whole number of bytes", () => {
  assert.throws(
    () => new GoawayFrameFilter(-1, () => {}),
    /prefaceBytes must be a whole number of bytes ≥ 0, got -1/,
  );
  assert.throws(() => new GoawayFrameFilter(1.5, () => {}), RangeError);
});
