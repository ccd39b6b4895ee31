import assert from "node:assert/strict";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { JWT_TOKEN_TYPE, stsRouter, TOKEN_EXCHANGE_GRANT_TYPE } from "./sts_server.ts";
import type { StsRequest, TokenExchangePlugin } from "./token_exchange.ts";

/** A plugin that issues `token` for any request it is given, and keeps what it was given. */
function issuingPlugin(token: string, seen: StsRequest[] = []): TokenExchangePlugin {
  return {
    exchange(request) {
      seen.push(request);
      if (token === "") return Promise.reject(new Error("The upstream said no"));
      return Promise.resolve({
        access_token: token,
        issued_token_type: "urn:ietf:params:oauth:token-type:access_token",
        token_type: "Bearer",
        expires_in: 60,
        scope: "",
        refresh_token: "",
      });
    },
    status: () => [],
  };
}

const FORM = { "content-type": "application/x-www-form-urlencoded" };
const VALID = {
  grant_type: TOKEN_EXCHANGE_GRANT_TYPE,
  subject_token: "a.b.c",
  subject_token_type: JWT_TOKEN_TYPE,
  audience: "svc",
  scope: "s",
};

function post(fields: Record<string, string>, headers: Record<string, string> = FORM): Request {
  return new Request("http://127.0.0.1:15463/token", {
    method: "POST",
    headers,
    body: new URLSearchParams(fields).toString(),
  });
}

Deno.test("STS /token hands a valid exchange's parameters to the plugin and answers its token", async () => {
  const seen: StsRequest[] = [];
  const router = stsRouter(issuingPlugin("t-1", seen), new RecordingLogger());
  const response = await router.handle(post(VALID));
  assert.equal(response.status, 200);
  assert.equal((await response.json()).access_token, "t-1");
  assert.equal(seen[0].subjectToken, "a.b.c");
  assert.equal(seen[0].audience, "svc");
  assert.equal(seen[0].scope, "s");
});

Deno.test("STS /token refuses what is not a token exchange with invalid_request, never quoting the token", async () => {
  const router = stsRouter(issuingPlugin("t-1"), new RecordingLogger());
  const long = "x".repeat(300);
  const cases: [Request, RegExp][] = [
    [new Request("http://127.0.0.1/token"), /method must be POST, not "GET"/],
    [
      post(VALID, { "content-type": "application/json" }),
      /content type must be application\/x-www-form-urlencoded/,
    ],
    [post({ ...VALID, grant_type: "password" }), /grant_type must be .*token-exchange, not "password"/],
    [post({ ...VALID, subject_token: "" }), /subject_token is empty/],
    [post({ ...VALID, subject_token_type: long }), /not a value of 300 characters/],
  ];
  for (const [request, message] of cases) {
    const response = await router.handle(request);
    assert.equal(response.status, 400);
    const body = await response.json();
    assert.equal(body.error, "invalid_request");
    assert.match(body.error_description, message);
  }
});

Deno.test("STS /token answers invalid_target when the plugin cannot issue a token", async () => {
  const response = await stsRouter(issuingPlugin(""), new RecordingLogger()).handle(post(VALID));
  assert.equal(response.status, 500);
  assert.deepEqual(await response.json(), {
    error: "invalid_target",
    error_description: "The upstream said no",
    error_uri: "",
  });
});
