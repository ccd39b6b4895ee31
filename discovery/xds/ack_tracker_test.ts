import assert from "node:assert/strict";
import { AckTracker, NACK_TEXT_KEPT } from "./ack_tracker.ts";

const CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
const EDS = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";

Deno.test("AckTracker takes only the latest nonce of a type as an ACK, any other as stale", () => {
  const acks = new AckTracker();
  assert.equal(acks.replyKind(CDS, "", false), "request");
  acks.sent(CDS, "v1", "n1");
  acks.sent(CDS, "v2", "n2");
  assert.equal(acks.replyKind(CDS, "n1", false), "stale");
  assert.equal(acks.replyKind(CDS, "n2", false), "ack");
  assert.equal(acks.replyKind(EDS, "n2", false), "stale", "nonces are per type");
  assert.equal(acks.replyKind(CDS, "n1", true), "nack", "a rejection is a NACK whatever its nonce");
});

Deno.test("AckTracker records an ACK and says which push version it stands for", () => {
  const acks = new AckTracker();
  acks.sent(CDS, "v1", "7/abc");
  assert.equal(acks.acked(CDS, "7/abc", "v1"), "7", "a tracked nonce carries its push version");
  const status = acks.status()[CDS];
  assert.equal(status.nonceAcked, "7/abc");
  assert.equal(status.versionAcked, "v1");
  assert.ok(status.sentAt !== undefined && status.ackedAt !== undefined);
  assert.equal(acks.acked(EDS, "untracked", ""), undefined, "an untracked nonce stands for no version");
});

Deno.test("AckTracker lets the latest response stand for later pushes that had nothing new", () => {
  const acks = new AckTracker();
  assert.equal(acks.unchanged(CDS, "8"), false, "a type never sent records nothing");
  assert.equal(acks.status()[CDS], undefined);
  acks.sent(CDS, "v1", "7/abc");
  assert.equal(acks.unchanged(CDS, "8"), false, "not yet ACKed");
  assert.equal(acks.acked(CDS, "7/abc", "v1"), "8", "the ACK stands for the newest unchanged push");
  assert.equal(acks.unchanged(CDS, "9"), true, "already ACKed: at the new version at once");
  acks.sent(CDS, "v2", "10/abd");
  assert.equal(acks.status()[CDS].unchangedThrough, undefined, "a new response starts afresh");
});

Deno.test("AckTracker keeps a NACK only for a type it sent, its text cut, until a newer response", () => {
  const acks = new AckTracker();
  acks.nacked(EDS, "n0", "InvalidArgument", "never sent");
  assert.equal(acks.status()[EDS], undefined);
  acks.sent(CDS, "v1", "n1");
  acks.nacked(CDS, "n1", "InvalidArgument", "x".repeat(NACK_TEXT_KEPT + 100));
  assert.ok(acks.rejectedLatest(CDS));
  const nack = acks.status()[CDS].lastNack!;
  assert.equal(nack.nonce, "n1");
  assert.equal(nack.code, "InvalidArgument");
  assert.ok(nack.message.length <= NACK_TEXT_KEPT + 1);
  acks.sent(CDS, "v2", "n2");
  assert.equal(acks.rejectedLatest(CDS), false, "the proxy has not rejected the newer response");
  assert.equal(acks.status()[CDS].lastNack?.nonce, "n1", "the last NACK is kept for the debug pages");
  acks.forget(CDS);
  assert.deepEqual(acks.status(), {});
});

Deno.test("AckTracker reports only what it knows of a type, and a new response's report drops the standing", () => {
  const acks = new AckTracker();
  acks.sent(CDS, "v1", "7/abc");
  assert.deepEqual(Object.keys(acks.status()[CDS]).sort(), ["nonceSent", "sentAt", "versionSent"]);
  acks.acked(CDS, "7/abc", "v1");
  acks.unchanged(CDS, "8");
  assert.equal(acks.status()[CDS].unchangedThrough, "8");
  acks.sent(CDS, "v2", "9/abd");
  const report = acks.status()[CDS];
  assert.ok(!("unchangedThrough" in report), "absent, not undefined, once a new response went");
  assert.equal(report.nonceSent, "9/abd");
  assert.equal(report.nonceAcked, "7/abc", "the last ACK stays until the next");
});
