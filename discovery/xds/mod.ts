/**
 * The xDS server: state-of-the-world and incremental ADS over grpc-js, the push queue, the encoded-resource
 * cache, config distribution tracking and the xDS debug paths; the generator contract is in `../generate/`.
 *
 * @module
 */
export * from "../generate/generator.ts";
export * from "./push_queue.ts";
export * from "./xds_cache.ts";
export * from "./versioned_resource.ts";
export * from "./shape_memo.ts";
export * from "./snapshot_conflicts.ts";
export * from "./xds_settings.ts";
export * from "./xds_admission.ts";
export * from "./xds_metrics.ts";
export * from "./xds_types.ts";
export * from "./nonce.ts";
export * from "./distribution_tracker.ts";
export * from "./response_builder.ts";
export * from "./ack_tracker.ts";
export * from "./xds_connection.ts";
export * from "./sotw_connection.ts";
export * from "./delta_connection.ts";
export * from "./ads_stream.ts";
export * from "./ads_server.ts";
export * from "./xds_grpc_server.ts";
export * from "./debug_routes.ts";
