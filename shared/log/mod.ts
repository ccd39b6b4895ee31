/**
 * Scoped, levelled logging for both programs.
 * @module
 */
export * from "./levels.ts";
export * from "./logger.ts";
export * from "./log_manager.ts";
export * from "./sinks.ts";
export * from "./rotating_file_sink.ts";
