/**
 * The orchestrator (a Kubernetes-style API server) as a service registry.
 *
 * @module
 */
export * from "./orch_analysis_objects.ts";
export * from "./orch_client.ts";
export * from "./orch_convert.ts";
export * from "./orch_csr_signer.ts";
export * from "./orch_http.ts";
export * from "./orch_objects.ts";
export * from "./orch_config_source.ts";
export * from "./orch_registry.ts";
export * from "./orch_secret_store.ts";
export * from "./orchestrator.ts";
export * from "./remote_clusters.ts";
export * from "./root_cert_config_maps.ts";
export * from "./token_review.ts";
export * from "./webhook_ca_bundle.ts";
export * from "./orch_writers.ts";
export * from "./rate_limiter.ts";
