/**
 * What the per-family lists of kinds that cannot change a type share (`envoy/unaffected_kinds.ts`,
 * `grpc_unaffected_kinds.ts`, read through {@link XdsGenerator.unaffectedBy}).
 *
 * @module
 */

/** A frozen set of kind names. */
export const kinds = (...names: string[]): ReadonlySet<string> => Object.freeze(new Set(names));

/** Kinds that reach generators only as service and endpoint changes. */
export const REGISTRY_ONLY: readonly string[] = Object.freeze(["WorkloadEntry", "WorkloadGroup"]);

/** The security kinds only a sidecar's inbound listener (or an Envoy JWKS cluster) reads. */
export const INBOUND_SECURITY: readonly string[] = Object.freeze([
  "PeerAuthentication",
  "AuthorizationPolicy",
  "RequestAuthentication",
]);
