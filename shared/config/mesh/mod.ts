/**
 * Mesh-wide configuration files: the mesh config (with the default proxy config) and mesh networks, parsed
 * with Istio 1.9's defaults and merge rules, validated with field paths and source lines.
 * @module
 */
export * from "./mesh_config.ts";
export * from "./proxy_config.ts";
export * from "./extension_providers.ts";
export * from "./mesh_networks.ts";
export * from "./mesh_config_error.ts";
export * from "./parse_mesh_config.ts";
export * from "./mesh_config_json.ts";
export * from "./yaml_documents.ts";
export type { Decoder } from "./decoders.ts";
export type { MeshConfigFields } from "./mesh_config_schema.ts";
export { type Issue, ValidationReport } from "../validation/report.ts";
