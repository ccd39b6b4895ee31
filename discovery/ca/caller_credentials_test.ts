import assert from "node:assert/strict";
import { callerCredentialsOf, type CredentialedCall } from "./caller_credentials.ts";

const call = (peer: string, authorization: string[]): CredentialedCall =>
  ({
    getPeer: () => peer,
    getAuthContext: () => ({}),
    metadata: { get: (key: string) => key === "authorization" ? authorization : [] },
  }) as unknown as CredentialedCall;

Deno.test("callerCredentialsOf hands the authenticators the authorization metadata and the caller's address", () => {
  assert.deepEqual(callerCredentialsOf(call("10.0.0.9:40001", ["Bearer abc"])), {
    authorization: ["Bearer abc"],
    peerAddress: "10.0.0.9",
  });
  assert.deepEqual(callerCredentialsOf(call("/run/sds.sock", [])), { authorization: [] });
});
