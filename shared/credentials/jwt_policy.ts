/**
 * `JWT_POLICY`: which orchestrator token a workload proves its identity with. `third-party-jwt` is a projected
 * token bound to the CA's audiences (`TOKEN_AUDIENCES`); `first-party-jwt` is the service account's own token,
 * bound to the orchestrator alone, which the CA then reviews without asking for an audience.
 *
 * @module
 */

/** The two token kinds the reference names. */
export type JwtPolicy = "third-party-jwt" | "first-party-jwt";

/** Where the agent reads a projected, audience-bound token (relative to its working directory, as the reference). */
export const THIRD_PARTY_TOKEN_PATH = "./var/run/secrets/tokens/mesh-token";
/** Where the orchestrator mounts the service account's own token. */
export const FIRST_PARTY_TOKEN_PATH = "/var/run/secrets/kubernetes.io/serviceaccount/token";

/**
 * Checks a `JWT_POLICY` value.
 *
 * @throws {RangeError} naming the variable and the two accepted values
 */
export function parseJwtPolicy(value: string): JwtPolicy {
  if (value === "third-party-jwt" || value === "first-party-jwt") return value;
  throw new RangeError(
    `JWT_POLICY=${JSON.stringify(value)}: expected "third-party-jwt" (a projected token at ` +
      `${THIRD_PARTY_TOKEN_PATH}) or "first-party-jwt" (the service account's token at ${FIRST_PARTY_TOKEN_PATH})`,
  );
}

/** The file the agent reads its token from under `policy`. */
export function tokenPathOf(policy: JwtPolicy): string {
  return policy === "third-party-jwt" ? THIRD_PARTY_TOKEN_PATH : FIRST_PARTY_TOKEN_PATH;
}
