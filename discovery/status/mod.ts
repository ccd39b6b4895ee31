/**
 * Status of mesh resources written back to the orchestrator: distribution status and the writer other
 * status fields go through.
 *
 * @module
 */
export * from "./distribution_controller.ts";
export * from "./distribution_reporter.ts";
export * from "./distribution_status.ts";
export * from "./reconciled_condition.ts";
export * from "./status_writer.ts";
export * from "./validation_messages_sink.ts";
