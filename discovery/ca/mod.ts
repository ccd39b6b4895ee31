/**
 * The certificate authority: key material, signing policy, caller authentication and the gRPC service.
 *
 * @module
 */
export * from "./ca_cert_file.ts";
export * from "./ca_keys.ts";
export * from "./ca_service.ts";
export * from "./ca_settings.ts";
export * from "./ca_signer.ts";
export * from "./caller_authenticator.ts";
export * from "./certificate_authority.ts";
export * from "./forwarded_csr.ts";
export * from "./federated_bundles.ts";
export * from "./signing_queue.ts";
export * from "./spiffe_bundle.ts";
export * from "./token_review_authenticator.ts";
export * from "./xds_caller_check.ts";
