/**
 * The HTTPS webhook server (`--httpsAddr`): readiness, the configuration validation webhook, and later the
 * sidecar injection webhook.
 * @module
 */
export * from "./admission_review.ts";
export * from "./validate_admission.ts";
export * from "./validation_webhook.ts";
export * from "./serving_tls.ts";
export * from "./serving_tls_files.ts";
export * from "./webhook_server.ts";
