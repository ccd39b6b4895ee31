/**
 * Sidecar injection: the `/inject` mutating webhook of `mesh-discovery`, rendering the reference's injection
 * templates over pods.
 * @module
 */
export * from "./start_injection.ts";
export * from "./inject_webhook.ts";
export * from "./inject_review.ts";
export * from "./injector_files.ts";
export * from "./inject_config.ts";
export * from "./inject_pod.ts";
