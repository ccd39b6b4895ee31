import assert from "node:assert/strict";
import { replyKind } from "./reply_kind.ts";

Deno.test("replyKind takes a rejection as a NACK whatever nonce it carries", () => {
  assert.equal(replyKind("2", "2", true), "nack");
  assert.equal(replyKind("2", "1", true), "nack");
  assert.equal(replyKind("2", "", true), "nack");
  assert.equal(replyKind(undefined, "", true), "nack");
});

Deno.test("replyKind takes a request without a nonce as asking afresh", () => {
  assert.equal(replyKind(undefined, "", false), "request");
  assert.equal(replyKind("7", "", false), "request");
});

Deno.test("replyKind takes only the latest nonce as an ACK and any other as stale", () => {
  assert.equal(replyKind("2", "2", false), "ack");
  assert.equal(replyKind("2", "1", false), "stale");
  assert.equal(replyKind(undefined, "1", false), "stale", "a nonce when nothing was sent is not ours");
});
