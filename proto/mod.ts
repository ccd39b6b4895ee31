/**
 * The protobuf foundation: Envoy's v3 schema, type URLs, Any encoding, hand-framed discovery responses,
 * request decoding, Struct/JSON conversion and protoc-gen-validate checks.
 *
 * @module
 */
export * from "./envoy_schema.ts";
export * from "./type_urls.ts";
export * from "./struct_json.ts";
export * from "./object_check.ts";
export * from "./any_codec.ts";
export * from "./plain_message.ts";
export * from "./discovery_frame.ts";
export * from "./grpc_prefix.ts";
export * from "./discovery_request.ts";
export * from "./pgv_rules.ts";
export * from "./pgv_validate.ts";
export * from "./ads_service.ts";
export * from "./name_table.ts";
