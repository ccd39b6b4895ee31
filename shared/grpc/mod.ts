/**
 * The gRPC transport shared by every gRPC server: binding (TCP, Unix socket), TLS and client certificates,
 * keepalive, per-connection limits, shutdown, and the peer identity handed to handlers. Nothing outside this
 * folder uses grpc-js's server API.
 *
 * @module
 */
export * from "./grpc_channel_options.ts";
export * from "./server_credentials.ts";
export * from "./peer_identity.ts";
export * from "./grpc_server.ts";
export * from "./grpc_status.ts";
export * from "./outbound_state.ts";
export * from "./prefixed_send.ts";
export * from "./peer_guard.ts";
export * from "./http2_goaway_scanner.ts";
