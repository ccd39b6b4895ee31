/**
 * The mesh control plane and agent workspace; each member is re-exported under its own name.
 * @module
 */
export * as shared from "./shared/mod.ts";
export * as discovery from "./discovery/mod.ts";
export * as agent from "./agent/mod.ts";
