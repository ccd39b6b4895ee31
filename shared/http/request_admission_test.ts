import assert from "node:assert/strict";
import { type AdmittedRequest, RequestAdmission } from "./request_admission.ts";

const LIMITS = { maxRequests: 3, maxRequestsPerPeer: 2, maxBodyBytes: 100, maxBodyBytesPerPeer: 60 };

Deno.test("RequestAdmission refuses past the listener's and each address's bounds, and forgets what ended", () => {
  const admission = new RequestAdmission(LIMITS);
  const a1 = admission.admit("a", 50) as AdmittedRequest;
  assert.equal(admission.admit("a", 20), "peer_body_bytes");
  const a2 = admission.admit("a", 0) as AdmittedRequest;
  assert.equal(admission.admit("a", 0), "peer_requests");
  assert.equal(a2.take(11), "peer_body_bytes");
  const b1 = admission.admit("b", 50) as AdmittedRequest;
  assert.equal(admission.admit("c", 0), "requests");
  assert.equal(a2.take(1), "body_bytes");
  b1.release();
  assert.equal(admission.admit("c", 60), "body_bytes");
  assert.equal(a2.take(10), undefined);
  a1.release();
  a1.release();
  a2.release();
  assert.deepEqual(admission.usage, { requests: 0, bytes: 0 });
});
