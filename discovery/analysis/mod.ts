/**
 * Configuration analysis: the reference's analyzers over the mesh resources (and, with an orchestrator, the
 * orchestrator objects they read), run debounced on snapshots, results published to sinks.
 * @module
 */
export * from "./analysis_message.ts";
export * from "./analysis_input.ts";
export * from "./analyzer.ts";
export * from "./all_analyzers.ts";
export * from "./analysis_runner.ts";
export * from "./analysis_sink.ts";
export * from "./analysis_scheduler.ts";
export * from "./store_analysis_input.ts";
