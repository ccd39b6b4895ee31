/**
 * Networking resource kinds (`networking.mesh.io` v1alpha3/v1beta1, alias `networking.istio.io`): typed specs
 * and validators for VirtualService, DestinationRule, ServiceEntry, WorkloadEntry, WorkloadGroup, Gateway,
 * Sidecar and EnvoyFilter, with Istio 1.9's fields and rules.
 *
 * @module
 */
export * from "./virtual_service.ts";
export * from "./virtual_service_http.ts";
export * from "./virtual_service_match.ts";
export * from "./virtual_service_policies.ts";
export * from "./route_destinations.ts";
export * from "./destination.ts";
export * from "./header_operations.ts";
export * from "./string_match.ts";
export * from "./gateway_names.ts";
export * from "./destination_rule.ts";
export * from "./traffic_policy.ts";
export * from "./locality_lb.ts";
export * from "./tls_settings.ts";
export * from "./service_entry.ts";
export * from "./workload_entry.ts";
export * from "./workload_group.ts";
export * from "./gateway.ts";
export * from "./port.ts";
export * from "./sidecar.ts";
export * from "./sidecar_listeners.ts";
export * from "./envoy_filter.ts";
export * from "./envoy_filter_match.ts";
export { type Issue, ValidationReport } from "../validation/report.ts";
export type { ValidationContext } from "../validation/context.ts";
export type { Protocol } from "../validation/ports.ts";
