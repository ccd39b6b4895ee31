import * as k8s from "@kubernetes/client-node";
import type { RateLimiter } from "./orch_client.ts";

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

/**
 * A function that asks the orchestrator's TokenReview API (`authentication.k8s.io/v1`) about a token, for the
 * audiences given (none: the orchestrator's own). The call goes through the client's rate limit; a failed
 * call throws.
 */
export function orchTokenReviewer(
  client: { readonly kubeConfig: k8s.KubeConfig; readonly limiter: RateLimiter },
): (token: string, audiences: readonly string[]) => Promise<TokenReviewResult> {
  const api = client.kubeConfig.makeApiClient(k8s.AuthenticationV1Api);
  return async (token, audiences) => {
    await client.limiter.acquire();
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
  };
}
