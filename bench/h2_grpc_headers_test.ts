import assert from "node:assert/strict";
import {
  hpackInteger,
  literalIndexedName,
  literalNewName,
  RESPONSE_HEADERS_BLOCK,
  trailersBlock,
  trailersOnlyBlock,
} from "./h2_grpc_headers.ts";

const ascii = (text: string) => [...new TextEncoder().encode(text)];

Deno.test("HPACK integers match RFC 7541's examples C.1.1-C.1.3", () => {
  assert.deepEqual(hpackInteger(10, 5, 0), [0x0a]);
  assert.deepEqual(hpackInteger(1337, 5, 0), [0x1f, 0x9a, 0x0a]);
  assert.deepEqual(hpackInteger(42, 8, 0), [0x2a]);
});

Deno.test("literals without indexing match RFC 7541's example C.2.2 and its new-name form", () => {
  assert.deepEqual(literalIndexedName(4, "/sample/path"), [0x04, 0x0c, ...ascii("/sample/path")]);
  assert.deepEqual(literalNewName("password", "secret"), [
    0x00,
    0x08,
    ...ascii("password"),
    0x06,
    ...ascii("secret"),
  ]);
});

Deno.test("a gRPC response's blocks use only the static table and literals without indexing", () => {
  assert.deepEqual([...RESPONSE_HEADERS_BLOCK], [0x88, 0x0f, 0x10, 0x10, ...ascii("application/grpc")]);
  assert.deepEqual([...trailersBlock(0)], [0x00, 0x0b, ...ascii("grpc-status"), 0x01, ...ascii("0")]);
  assert.deepEqual([...trailersOnlyBlock(5, "no ü")], [
    ...RESPONSE_HEADERS_BLOCK,
    ...[0x00, 0x0b, ...ascii("grpc-status"), 0x01, ...ascii("5")],
    ...[0x00, 0x0c, ...ascii("grpc-message"), 0x09, ...ascii("no %C3%BC")],
  ]);
});
