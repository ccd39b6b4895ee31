/**
 * The Envoy sidecar and gateway generators (the `default` family).
 *
 * @module
 */
export * from "./cluster_protocol.ts";
export * from "./envoy_cds.ts";
export * from "./envoy_eds.ts";
export * from "./envoy_filter_reports.ts";
export * from "./envoy_generators.ts";
export * from "./envoy_lds.ts";
export * from "./envoy_rds.ts";
export * from "./envoy_sds.ts";
export * from "./gateway_plan.ts";
export * from "./gateway_resources.ts";
export * from "./sds_config.ts";
export * from "./upstream_tls.ts";
