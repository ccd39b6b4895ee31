import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import FakeTimers from "@sinonjs/fake-timers";
import { KeyedRateLimiter } from "@mesh/shared/time/keyed_rate_limiter";
import { authenticateCaller, AuthenticationError } from "./caller_authenticator.ts";
import {
  type ReviewToken,
  TokenReviewAuthenticator,
  type TokenReviewAuthenticatorOptions,
  type TokenReviewVerdict,
} from "./token_review_authenticator.ts";

const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
const jwt = (claims: Record<string, unknown>) => `${part({ alg: "RS256" })}.${part(claims)}.c2lnbmF0dXJl`;
const SA = "system:serviceaccount:shop:ratings";
const PROJECTED = jwt({ sub: SA, aud: ["mesh-ca"] });
const LEGACY = jwt({ sub: SA });
const ORCH_ONLY = jwt({ sub: SA, aud: "kubernetes.default.svc" });
const SERVICE_ACCOUNT: TokenReviewVerdict = {
  authenticated: true,
  username: SA,
  groups: ["system:serviceaccounts", "system:serviceaccounts:shop", "system:authenticated"],
};

/** An orchestrator stand-in that answers from a table and records the audiences each review asked for. */
function reviewer(verdicts: Record<string, TokenReviewVerdict>) {
  const asked: (readonly string[])[] = [];
  const review: ReviewToken = (token, audiences) => {
    asked.push(audiences);
    return Promise.resolve(
      verdicts[token] ?? { authenticated: false, error: `invalid bearer token ${token}` },
    );
  };
  return { review, asked };
}

function authenticator(review: ReviewToken, overrides: Partial<TokenReviewAuthenticatorOptions> = {}) {
  return new TokenReviewAuthenticator({
    review,
    audiences: ["mesh-ca"],
    requireAudience: false,
    jwtPolicy: "third-party-jwt",
    trustDomain: "cluster.local",
    ...overrides,
  });
}

const bearer = (token: string) => ({ authorization: [`Bearer ${token}`] });

Deno.test("A token the orchestrator reviews as a service account's names its SPIFFE identity", async () => {
  const { review, asked } = reviewer({ [PROJECTED]: SERVICE_ACCOUNT });
  assert.deepEqual(await authenticator(review).authenticate(bearer(PROJECTED)), [
    "spiffe://cluster.local/ns/shop/sa/ratings",
  ]);
  assert.deepEqual(asked, [["mesh-ca"]], "a projected token is reviewed for TOKEN_AUDIENCES");
});

Deno.test("The audiences a review asks for follow the token's binding, JWT_POLICY and REQUIRE_3P_TOKEN", () => {
  const { review } = reviewer({});
  const third = authenticator(review);
  const first = authenticator(review, { jwtPolicy: "first-party-jwt" });
  const strict = authenticator(review, { jwtPolicy: "first-party-jwt", requireAudience: true });
  assert.deepEqual(third.audiencesFor(PROJECTED), ["mesh-ca"]);
  assert.deepEqual(third.audiencesFor(LEGACY), [], "a legacy token is bound to no audience");
  assert.deepEqual(strict.audiencesFor(LEGACY), ["mesh-ca"]);
  assert.deepEqual(third.audiencesFor(ORCH_ONLY), ["mesh-ca"], "third-party-jwt wants the CA's audience");
  assert.deepEqual(first.audiencesFor(ORCH_ONLY), [], "first-party-jwt takes the orchestrator's own");
  assert.deepEqual(strict.audiencesFor(ORCH_ONLY), ["mesh-ca"]);
  assert.deepEqual(third.audiencesFor("not-a-jwt"), ["mesh-ca"]);
});

Deno.test("A token the review rejects is refused without the token in the message", async () => {
  const { review } = reviewer({});
  const error = await authenticateCaller([authenticator(review)], bearer(PROJECTED)).catch((e) => e);
  assert.ok(error instanceof AuthenticationError);
  assert.match(error.message, /orchestrator token review: .*refused the token: invalid bearer token <token>/);
  assert.ok(!error.message.includes(PROJECTED), "the token is not echoed");
  assert.ok(!error.message.includes(PROJECTED.split(".")[1]), "nor its claims");
});

Deno.test("A reviewed user that is not a service account names no identity", async () => {
  const { review } = reviewer({
    [PROJECTED]: { authenticated: true, username: "alice", groups: ["system:authenticated"] },
    [LEGACY]: { authenticated: true, username: "alice", groups: ["system:serviceaccounts"] },
  });
  for (const token of [PROJECTED, LEGACY]) {
    const error = await authenticator(review).authenticate(bearer(token)).catch((e) => e);
    assert.ok(error instanceof AuthenticationError && error.identityMissing, error.message);
  }
});

Deno.test("A call without a bearer token is not the token review's to judge, and a failed review call is an error", async () => {
  const failing: ReviewToken = () =>
    Promise.reject(new Error(`connection refused while sending ${PROJECTED}`));
  assert.equal(await authenticator(failing).authenticate({ authorization: [] }), undefined);
  const error = await authenticator(failing).authenticate(bearer(PROJECTED)).catch((e) => e);
  assert.ok(error instanceof AuthenticationError);
  assert.match(error.message, /could not be asked: connection refused/);
  assert.ok(!error.message.includes(PROJECTED));
});

Deno.test("A caller address past its review budget is refused without asking the orchestrator; others are reviewed", async () => {
  const clock = FakeTimers.createClock(0);
  const { review, asked } = reviewer({ [PROJECTED]: SERVICE_ACCOUNT });
  const perPeer = new KeyedRateLimiter({ burst: 2, qps: 1, maxKeys: 10 }, () => clock.now);
  const reviews = authenticator(review, { perPeer });
  const from = (peerAddress: string | undefined, token: string) => ({
    ...bearer(token),
    ...(peerAddress !== undefined ? { peerAddress } : {}),
  });
  // Made-up tokens spend the budget as surely as good ones: the orchestrator is asked either way.
  for (const token of ["made-up-1", "made-up-2"]) {
    await assert.rejects(
      reviews.authenticate(from("10.0.0.9", token)),
      /did not authenticate|refused the token/,
    );
  }
  const error = await reviews.authenticate(from("10.0.0.9", PROJECTED)).catch((e) => e);
  assert.ok(error instanceof AuthenticationError);
  assert.equal(
    error.message,
    "token reviews from 10.0.0.9 are past their budget of 2 at once and 1 a second; retry in 1000 ms",
  );
  assert.equal(asked.length, 2, "the refused call never reached the orchestrator");
  assert.deepEqual(await reviews.authenticate(from("10.0.0.7", PROJECTED)), [
    "spiffe://cluster.local/ns/shop/sa/ratings",
  ]);
  for (let i = 0; i < 3; i++) {
    assert.ok(await reviews.authenticate(from(undefined, PROJECTED)), "a Unix socket's caller has no budget");
  }
  clock.tick(1000);
  assert.ok(await reviews.authenticate(from("10.0.0.9", PROJECTED)), "a token a second comes back");
});
