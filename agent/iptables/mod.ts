/**
 * Traffic capture for `mesh-agent mesh-iptables` and `mesh-agent mesh-clean-iptables`: options, the pure
 * rule builder and renderers, the runner over an injected command executor, and the capture probe.
 * @module
 */

export * from "./build_plan.ts";
export * from "./capture_logger.ts";
export * from "./capture_probe.ts";
export * from "./cidr.ts";
export * from "./clean_plan.ts";
export * from "./config.ts";
export * from "./constants.ts";
export * from "./executor.ts";
export * from "./passwd.ts";
export * from "./probe_target.ts";
export * from "./render.ts";
export * from "./rule_set.ts";
export * from "./runner.ts";
