import assert from "node:assert/strict";
import { Http1Framer } from "./http1_framer.ts";

const encode = (text: string) => new TextEncoder().encode(text);

Deno.test("Http1Framer finds pipelined requests with length, chunked and no bodies, byte by byte too", () => {
  const stream = "POST /a HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc" +
    "POST /b HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n0\r\nTrailer: t\r\n\r\n" +
    "\r\nGET /c HTTP/1.1\r\nHost: x\r\n\r\n" +
    "GET /d HTTP/1.1\r\nHo";
  for (const step of [stream.length, 1]) {
    const methods: string[] = [];
    const framer = new Http1Framer("request", 1024, undefined, ({ start }) => methods.push(start));
    const bytes = encode(stream);
    for (let i = 0; i < bytes.length; i += step) framer.feed(bytes.subarray(i, i + step));
    assert.deepEqual([framer.heads, framer.completed, framer.inHead, framer.opaque], [3, 3, true, false]);
    assert.deepEqual(methods, ["POST", "POST", "GET"]);
  }
});

Deno.test("Http1Framer knows which responses have no body", () => {
  const methods = ["HEAD", "GET", "GET", "GET"];
  const framer = new Http1Framer("response", 1024, () => methods.shift());
  framer.feed(encode(
    "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n" + // HEAD: no body follows
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n" +
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n" +
      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\no",
  ));
  assert.deepEqual([framer.heads, framer.completed, framer.opaque], [4, 3, false]);
});

Deno.test("Http1Framer gives up on what it cannot frame, and flags a header block over its cap", () => {
  for (const text of ["PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "GET / HTTP/1.1\r\nUpgrade: websocket\r\n\r\n"]) {
    const framer = new Http1Framer("request", 1024);
    framer.feed(encode(text));
    assert.equal(framer.opaque, true, text);
  }
  const closeDelimited = new Http1Framer("response", 1024, () => "GET");
  closeDelimited.feed(encode("HTTP/1.1 200 OK\r\n\r\nbody until close"));
  assert.equal(closeDelimited.opaque, true);
  const big = new Http1Framer("request", 64);
  big.feed(encode(`GET / HTTP/1.1\r\nX: ${"a".repeat(100)}`));
  assert.equal(big.tooLarge, true);
});
