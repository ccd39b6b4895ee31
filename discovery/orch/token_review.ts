import * as k8s from "@kubernetes/client-node";
import { RateLimiter } from "./rate_limiter.ts";

/** The orchestrator's verdict on a token: who it names, or why it does not pass. */
export interface TokenReviewResult {
  readonly authenticated: boolean;
  /** The reviewed user (`system:serviceaccount:<ns>:<sa>` for a service account). */
  readonly username?: string;
  /** The user's groups (`system:serviceaccounts` for a service account). */
  readonly groups?: readonly string[];
  /** The orchestrator's reason when the token did not pass. */
  readonly error?: string;
}

/** Reviews waiting or running at once, past which a caller is refused rather than queued. */
export const MAX_TOKEN_REVIEWS_IN_FLIGHT = 64;

/** Too many token reviews are waiting for the orchestrator; the caller may retry. */
export class TokenReviewBusyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TokenReviewBusyError";
  }
}

/**
 * A function that asks the orchestrator's TokenReview API (`authentication.k8s.io/v1`) about a token, for the
 * audiences given (none: the orchestrator's own); a failed call throws. Anyone who reaches the CA can make it
 * review a token, so reviews have a rate budget of their own (`limiter`, built from --orchApiQPS/--orchApiBurst
 * like the client's) and at most `maxInFlight` wait or run at once: a flood of made-up tokens is refused, and
 * never delays the registry's lists and watches.
 */
export function orchTokenReviewer(
  client: { readonly kubeConfig: k8s.KubeConfig; readonly limiter: RateLimiter },
  maxInFlight = MAX_TOKEN_REVIEWS_IN_FLIGHT,
): (token: string, audiences: readonly string[]) => Promise<TokenReviewResult> {
  const api = client.kubeConfig.makeApiClient(k8s.AuthenticationV1Api);
  const limiter = new RateLimiter(client.limiter.qps, client.limiter.burst, client.limiter.timers);
  let inFlight = 0;
  return async (token, audiences) => {
    if (inFlight >= maxInFlight) {
      throw new TokenReviewBusyError(
        `${maxInFlight} token reviews are already waiting for the orchestrator (--orchApiQPS); retry later`,
      );
    }
    inFlight++;
    try {
      return await review(token, audiences);
    } finally {
      inFlight--;
    }
  };

  async function review(token: string, audiences: readonly string[]): Promise<TokenReviewResult> {
    await limiter.acquire();
    const review = await api.createTokenReview({
      body: {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenReview",
        spec: { token, ...(audiences.length > 0 ? { audiences: [...audiences] } : {}) },
      },
    });
    const status = review.status ?? {};
    return {
      authenticated: status.authenticated === true,
      ...(status.user?.username !== undefined ? { username: status.user.username } : {}),
      ...(status.user?.groups !== undefined ? { groups: status.user.groups } : {}),
      ...(status.error ? { error: status.error } : {}),
    };
  }
}
