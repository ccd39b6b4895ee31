/**
 * The gRPC transport shared by every gRPC server: binding (TCP, Unix socket), TLS and client certificates,
 * keepalive, per-connection limits, shutdown, the peer identity handed to handlers, and the one send port
 * (`send_port.ts`) through which servers send on a stream. Nothing outside this folder uses grpc-js's server
 * API or reads the transport under a call.
 *
 * @module
 */
export * from "./grpc_channel_options.ts";
export * from "./server_credentials.ts";
export * from "./peer_identity.ts";
export * from "./grpc_server.ts";
export * from "./grpc_status.ts";
export * from "./send_deadlines.ts";
export * from "./send_port.ts";
export * from "./peer_guard.ts";
export * from "./http2_goaway_scanner.ts";
export * from "./decoded_chunk_release.ts";
