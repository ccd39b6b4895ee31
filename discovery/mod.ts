/**
 * The `mesh-discovery` program: command tree and composition root.
 * @module
 */
export * from "./cli/discovery_cli.ts";
export * from "./cli/discovery_options.ts";
export * from "./server.ts";
