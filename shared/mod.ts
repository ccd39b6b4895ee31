/**
 * What both programs share: settings (env registry, flag types), logging, metrics, CLI, HTTP helpers, config kinds.
 * @module
 */
export * from "./flags/duration.ts";
export * from "./flags/scalars.ts";
export * from "./env/env_vars.ts";
export * from "./env/env_settings.ts";
export * from "./log/mod.ts";
export * from "./metrics/metric_specs.ts";
export * from "./metrics/metrics.ts";
export * from "./cli/command_spec.ts";
export * from "./cli/flag_spec.ts";
export * from "./cli/run_cli.ts";
export * from "./cli/logging_flags.ts";
export * from "./cli/version_command.ts";
export * from "./cli/request_command.ts";
export * from "./http/router.ts";
export * from "./http/serve.ts";
export * from "./http/listen_address.ts";
export * from "./http/http_request.ts";
export * from "./version/build_info.ts";
export * from "./lifecycle/mod.ts";
