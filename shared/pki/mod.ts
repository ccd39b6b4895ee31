/**
 * Keys, certificates, certificate requests and SPIFFE ids, over WebCrypto and @peculiar/x509: what the CA
 * server, the agent's SDS and the webhook's serving certificate are built from.
 * @module
 */
export * from "./pem.ts";
export * from "./key_pair.ts";
export * from "./private_key_pem.ts";
export * from "./certificate_pem.ts";
export * from "./subject_alt_names.ts";
export * from "./certificate_authority.ts";
export * from "./certificate_request.ts";
export * from "./issue_certificate.ts";
export * from "./serving_certificate.ts";
export * from "./spiffe_id.ts";
