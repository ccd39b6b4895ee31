/**
 * Resource generators: pure functions of (proxy, push snapshot, request) behind the xDS server's generator
 * contract: the proxyless gRPC family (`GENERATOR=grpc`) and the Envoy family (`default`, in `envoy/`).
 *
 * @module
 */
export * from "./generator.ts";
export * from "./grpc_generators.ts";
export * from "./envoy/mod.ts";
export * from "./grpc_lds.ts";
export * from "./grpc_rds.ts";
export * from "./grpc_cds.ts";
export * from "./grpc_eds.ts";
export * from "./grpc_target.ts";
export * from "./name_table.ts";
export type { ClusterPolicy } from "./traffic_policy_merge.ts";
export type { EnvoyObject } from "./route_match.ts";
export type { PlannedRoute, RoutePlan } from "./route_plan.ts";
export type { WeightedCluster } from "./route_action.ts";
