import assert from "node:assert/strict";
import { typeState } from "./proxy_overview.ts";

Deno.test("A type is in sync when the proxy ACKed the response standing for the latest push", () => {
  assert.equal(typeState({}, "v2"), "pending");
  assert.equal(typeState({ nonceSent: "v2/1" }, "v2"), "pending");
  assert.equal(typeState({ nonceSent: "a", versionSent: "v2", nonceAcked: "a" }, "v2"), "synced");
  assert.equal(typeState({ nonceSent: "a", versionSent: "v1", nonceAcked: "a" }, "v2"), "behind");
  assert.equal(
    typeState({ nonceSent: "a", versionSent: "v1", nonceAcked: "a", unchangedThrough: "v2" }, "v2"),
    "synced",
    "a push with nothing new for the type leaves the last response standing for it",
  );
  const nack = { nonce: "v2/1", code: "INVALID_ARGUMENT", message: "bad", at: "2026-01-01T00:00:00Z" };
  assert.equal(typeState({ nonceSent: "v2/1", nonceAcked: "v1/1", lastNack: nack }, "v2"), "rejected");
  assert.equal(
    typeState({ nonceSent: "v2/2", versionSent: "v2", nonceAcked: "v2/2", lastNack: nack }, "v2"),
    "synced",
    "a NACK of an older response does not count once the newest is ACKed",
  );
});
