/**
 * The `mesh-agent` program: command tree and its subcommands.
 * @module
 */
export * from "./cli/agent_cli.ts";
export * from "./cli/wait_command.ts";
