/**
 * The push pipeline: change events → push requests → debouncer → frozen PushContext snapshots, with the
 * indexes generators query and the frozen endpoint snapshots the endpoint index publishes.
 * @module
 */
export * from "./push_request.ts";
export * from "./push_debouncer.ts";
export * from "./change_events.ts";
export * from "./endpoint_index.ts";
export { EndpointSnapshot, type NamespaceShards, noShards } from "./endpoint_snapshot.ts";
export * from "./frozen_map.ts";
export * from "./listener_conflicts.ts";
export * from "./push_context.ts";
export * from "./cluster_names.ts";
export * from "./snapshot_stage.ts";
export * from "./push_pipeline.ts";
export type { EgressHost, EgressScope, ScopeTrafficPolicy, SidecarScope } from "./sidecar_scope.ts";
export type { IndexedVirtualService } from "./virtual_service_index.ts";
export type { MergedDestinationRule } from "./destination_rule_index.ts";
export type { IndexedGateway } from "./gateway_index.ts";
export { outboundClusterName } from "./service_index.ts";
export type { ServiceIndex } from "./service_index.ts";
export type { VirtualServiceIndex } from "./virtual_service_index.ts";
export type { DestinationRuleIndex } from "./destination_rule_index.ts";
export type { GatewayIndex } from "./gateway_index.ts";
export type { Problem, ProblemMetric, PushProblems } from "./push_problems.ts";
