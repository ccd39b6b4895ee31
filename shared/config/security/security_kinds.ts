import type { ValidationReport } from "../validation/report.ts";
import type { ValidationContext } from "../validation/context.ts";
import { validatePeerAuthentication } from "./peer_authentication.ts";
import { validateRequestAuthentication } from "./request_authentication.ts";
import { validateAuthorizationPolicy } from "./authorization_policy.ts";

/** Kinds of the `security.mesh.io` group (alias `security.istio.io`), all served as v1beta1. */
export type SecurityKind = "PeerAuthentication" | "RequestAuthentication" | "AuthorizationPolicy";

/** Validates the spec of one resource, recording errors and warnings under the path `spec`. */
export type SpecValidator = (spec: unknown, report: ValidationReport, ctx: ValidationContext) => void;

/** The validator of each security kind, for the kind registry. */
export const securityKinds: Readonly<Record<SecurityKind, SpecValidator>> = {
  PeerAuthentication: validatePeerAuthentication,
  RequestAuthentication: validateRequestAuthentication,
  AuthorizationPolicy: validateAuthorizationPolicy,
};
