/**
 * Authenticates a workload by its orchestrator token, as the reference's Kubernetes JWT authenticator does: the
 * orchestrator's TokenReview API judges the bearer token and names its user; a service account's user
 * `system:serviceaccount:<ns>:<sa>` becomes `spiffe://<trust-domain>/ns/<ns>/sa/<sa>`.
 *
 * The audiences asked for follow the reference: a token bound to an audience (a projected, third-party token) is
 * reviewed for `TOKEN_AUDIENCES`; a legacy token bound to none is reviewed for the orchestrator's own, unless
 * `REQUIRE_3P_TOKEN`; a token bound only to the orchestrator (`kubernetes.default.svc`) passes without an
 * audience only under `JWT_POLICY=first-party-jwt`. The token itself never appears in an error.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type { JwtPolicy } from "@mesh/shared/credentials/jwt_policy";
import { excerpt } from "@mesh/shared/log/excerpt";
import { spiffeId } from "@mesh/shared/pki";
import type { KeyedRateLimiter } from "@mesh/shared/time/keyed_rate_limiter";
import {
  AuthenticationError,
  type CallerAuthenticator,
  type CallerCredentials,
} from "./caller_authenticator.ts";

/** The orchestrator's verdict on a token. */
export interface TokenReviewVerdict {
  readonly authenticated: boolean;
  readonly username?: string;
  readonly groups?: readonly string[];
  readonly error?: string;
}

/** Asks the orchestrator about `token` for `audiences` (empty: its own); throws when the call fails. */
export type ReviewToken = (token: string, audiences: readonly string[]) => Promise<TokenReviewVerdict>;

/** Settings of the token review. */
export interface TokenReviewAuthenticatorOptions {
  /** The orchestrator's TokenReview call, handed in by the composition root. */
  readonly review: ReviewToken;
  /** `TOKEN_AUDIENCES`. */
  readonly audiences: readonly string[];
  /** `REQUIRE_3P_TOKEN`: review every token for `TOKEN_AUDIENCES`. */
  readonly requireAudience: boolean;
  /** `JWT_POLICY`. */
  readonly jwtPolicy: JwtPolicy;
  /** The trust domain of the identities. */
  readonly trustDomain: string;
  /** Reviews each caller address may ask for; a caller without one (a Unix socket) is not counted. */
  readonly perPeer?: KeyedRateLimiter;
}

/** The audience the orchestrator's own tokens carry. */
const ORCH_AUDIENCE = "kubernetes.default.svc";
/** The group every service account is in. */
const SERVICE_ACCOUNTS_GROUP = "system:serviceaccounts";

/**
 * The `aud` claim of a JWT-shaped token, read without verifying it (the review verifies); undefined when the
 * token is not a JWT, an empty list when it has no audience.
 */
export function unverifiedAudiences(token: string): string[] | undefined {
  const parts = token.split(".");
  if (parts.length !== 3) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(parts[1], "base64url").toString("utf8")) as { aud?: unknown };
    if (claims === null || typeof claims !== "object") return undefined;
    if (claims.aud === undefined) return [];
    if (typeof claims.aud === "string") return [claims.aud];
    return Array.isArray(claims.aud)
      ? claims.aud.filter((a): a is string => typeof a === "string")
      : undefined;
  } catch {
    return undefined;
  }
}

/** Authenticates bearer tokens through the orchestrator's TokenReview API. */
export class TokenReviewAuthenticator implements CallerAuthenticator {
  readonly name = "orchestrator token review";
  readonly #options: TokenReviewAuthenticatorOptions;

  constructor(options: TokenReviewAuthenticatorOptions) {
    this.#options = options;
  }

  /** The audiences a review of `token` asks for. */
  audiencesFor(token: string): readonly string[] {
    const { audiences, requireAudience, jwtPolicy } = this.#options;
    const bound = unverifiedAudiences(token);
    if (bound !== undefined && bound.length === 0 && !requireAudience) return [];
    const onlyOrchestrator = bound?.length === 1 && bound[0] === ORCH_AUDIENCE;
    return onlyOrchestrator && jwtPolicy === "first-party-jwt" && !requireAudience ? [] : audiences;
  }

  async authenticate(call: CallerCredentials): Promise<string[] | undefined> {
    const header = call.authorization.find((v) => /^bearer /i.test(v));
    if (header === undefined) return undefined;
    const token = header.slice("bearer ".length).trim();
    // What the orchestrator says goes into errors cut and escaped, and never with the token in it.
    const quote = (text: string) => excerpt(token === "" ? text : text.replaceAll(token, "<token>"));
    const { perPeer } = this.#options;
    const budget = call.peerAddress === undefined ? undefined : perPeer?.take(call.peerAddress);
    if (budget?.allowed === false) {
      const { burst, qps } = perPeer!.limits;
      throw new AuthenticationError(
        `token reviews from ${call.peerAddress} are past their budget of ${burst} at once and ${qps} a second; ` +
          `retry in ${budget.retryAfterMs} ms`,
      );
    }
    let verdict: TokenReviewVerdict;
    try {
      verdict = await this.#options.review(token, this.audiencesFor(token));
    } catch (cause) {
      throw new AuthenticationError(
        `the orchestrator's token review could not be asked: ${quote((cause as Error).message)}`,
      );
    }
    if (verdict.error) {
      throw new AuthenticationError(
        `the orchestrator's token review refused the token: ${quote(verdict.error)}`,
      );
    }
    if (!verdict.authenticated) {
      throw new AuthenticationError("the orchestrator's token review did not authenticate the token");
    }
    if (!verdict.groups?.includes(SERVICE_ACCOUNTS_GROUP)) {
      throw new AuthenticationError(
        `the reviewed token is not a service account's: its user is not in group "${SERVICE_ACCOUNTS_GROUP}"`,
        { identityMissing: true },
      );
    }
    const parts = (verdict.username ?? "").split(":");
    if (parts.length !== 4 || parts[0] !== "system" || parts[1] !== "serviceaccount") {
      throw new AuthenticationError(
        `the reviewed user ${
          quote(verdict.username ?? "")
        } is not of the form system:serviceaccount:<ns>:<sa>`,
        { identityMissing: true },
      );
    }
    try {
      return [spiffeId(this.#options.trustDomain, parts[2], parts[3])];
    } catch (cause) {
      throw new AuthenticationError(
        `the reviewed service account makes no SPIFFE identity: ${(cause as Error).message}`,
        { identityMissing: true, cause },
      );
    }
  }
}
