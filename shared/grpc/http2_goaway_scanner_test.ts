import assert from "node:assert/strict";
import { http2ErrorName, Http2GoawayScanner } from "./http2_goaway_scanner.ts";

function frame(type: number, stream: number, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(9 + payload.length);
  const view = new DataView(out.buffer);
  out[0] = payload.length >> 16;
  out[1] = (payload.length >> 8) & 0xff;
  out[2] = payload.length & 0xff;
  out[3] = type;
  view.setUint32(5, stream);
  out.set(payload, 9);
  return out;
}

function goaway(code: number, debug = ""): Uint8Array {
  const payload = new Uint8Array(8 + debug.length);
  new DataView(payload.buffer).setUint32(4, code);
  payload.set(new TextEncoder().encode(debug), 8);
  return frame(7, 0, payload);
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) (out.set(p, at), at += p.length);
  return out;
}

Deno.test("Http2GoawayScanner finds the error code of a GOAWAY after other frames", () => {
  const bytes = concat(frame(4, 0, new Uint8Array(12)), frame(0, 1, new Uint8Array(300)), goaway(1, "bad"));
  const scanner = new Http2GoawayScanner();
  assert.equal(scanner.feed(bytes), 1);
  assert.equal(scanner.goawayCode, 1);
});

Deno.test("Http2GoawayScanner follows frames split at every byte", () => {
  const bytes = concat(frame(4, 0, new Uint8Array(6)), frame(0, 3, new Uint8Array(40)), goaway(6));
  const scanner = new Http2GoawayScanner();
  let found: number | undefined;
  for (const byte of bytes) found ??= scanner.feed(Uint8Array.of(byte));
  assert.equal(found, 6);
});

Deno.test("Http2GoawayScanner does not mistake payload bytes that look like a GOAWAY for one", () => {
  const lookalike = goaway(1);
  const scanner = new Http2GoawayScanner();
  assert.equal(scanner.feed(frame(0, 1, lookalike)), undefined);
  assert.equal(scanner.goawayCode, undefined);
  assert.equal(scanner.feed(goaway(3)), 3);
});

Deno.test("Http2GoawayScanner passes over graceful GOAWAYs and reports only the first with an error", () => {
  const scanner = new Http2GoawayScanner();
  assert.equal(scanner.feed(goaway(0)), undefined);
  assert.equal(scanner.feed(concat(goaway(0), goaway(1))), 1);
  assert.equal(scanner.feed(goaway(2)), undefined);
  assert.equal(scanner.goawayCode, 1);
});

Deno.test("http2ErrorName names the codes of RFC 9113 and marks others unknown", () => {
  assert.equal(http2ErrorName(1), "PROTOCOL_ERROR");
  assert.equal(http2ErrorName(11), "ENHANCE_YOUR_CALM");
  assert.equal(http2ErrorName(99), "UNKNOWN_99");
});
