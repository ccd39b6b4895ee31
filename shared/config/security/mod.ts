/**
 * Security resource kinds (`security.mesh.io/v1beta1`, alias `security.istio.io`): typed specs and
 * validators for PeerAuthentication, RequestAuthentication and AuthorizationPolicy, with Istio 1.9's
 * fields and rules.
 *
 * @module
 */
export * from "./security_kinds.ts";
export * from "./workload_selector.ts";
export * from "./peer_authentication.ts";
export * from "./request_authentication.ts";
export * from "./jwks_uri.ts";
export * from "./inline_jwks.ts";
export * from "./authorization_policy.ts";
export * from "./authorization_match.ts";
export * from "./authorization_condition.ts";
export type { MatchValueKind } from "./_match_values.ts";
export { type Issue, ValidationReport } from "../validation/report.ts";
export type { ValidationContext } from "../validation/context.ts";
