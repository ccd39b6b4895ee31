import type { MetricProgram } from "./metric_specs.ts";

/**
 * The metrics of the reference that are exported (so dashboards and alerts find every name) and never move, by
 * program, with the issue that will make each move. Their help text says so; docs/settings.md lists them;
 * `tests/settings_rule_test.ts` fails when a metric is neither moved in code nor listed here, or both.
 */

/** One exported metric that a program never updates. */
export interface NotEmittedMetric {
  /** The metric's name. */
  readonly name: string;
  /** The programs that export it without moving it. */
  readonly programs: readonly MetricProgram[];
  /** The issue that will make it move (`#28`), or `none` where its event cannot happen here. */
  readonly issue: string;
  /** Why it never moves. */
  readonly reason: string;
}

const D: readonly MetricProgram[] = ["discovery"];
const A: readonly MetricProgram[] = ["agent"];
const BOTH: readonly MetricProgram[] = ["discovery", "agent"];

function group(
  names: readonly string[],
  programs: readonly MetricProgram[],
  issue: string,
  reason: string,
): NotEmittedMetric[] {
  return names.map((name) => Object.freeze({ name, programs, issue, reason }));
}

/** Every exported metric that some program never moves. */
export const NOT_EMITTED_METRICS: readonly NotEmittedMetric[] = Object.freeze([
  ...group(
    [
      "config_runtime_processor_event_span_duration_milliseconds",
      "config_runtime_processor_events_processed_total",
      "config_runtime_processor_snapshot_events_total",
      "config_runtime_processor_snapshot_lifetime_duration_milliseconds",
      "config_runtime_processor_snapshots_published_total",
      "config_runtime_state_type_instances_total",
      "config_runtime_strategy_on_change_total",
      "config_runtime_strategy_timer_max_time_reached_total",
      "config_runtime_strategy_timer_quiesce_reached_total",
      "config_runtime_strategy_timer_resets_total",
      "config_source_orch_dynamic_converter_failure_total",
      "config_source_orch_dynamic_converter_success_total",
      "config_source_orch_event_error_total",
      "config_source_orch_event_success_total",
    ],
    D,
    "#31",
    "the reference's config processing runtime (Galley) is not built; config sources feed the store directly",
  ),
  ...group(
    [
      "mesh_mcp_clients_total",
      "mesh_mcp_message_sizes_bytes",
      "mesh_mcp_reconnections",
      "mesh_mcp_recv_failures_total",
      "mesh_mcp_request_acks_total",
      "mesh_mcp_request_nacks_total",
      "mesh_mcp_send_failures_total",
    ],
    D,
    "#31",
    "MCP is not built",
  ),
  ...group(
    ["config_validation_config_delete_error", "config_validation_config_load"],
    D,
    "none",
    "the reference never records it either: the configuration is never deleted, and loads are not counted",
  ),
  ...group(
    [
      "config_validation_config_delete_error",
      "config_validation_config_load",
      "config_validation_config_load_error",
      "config_validation_config_update_error",
      "config_validation_config_updates",
    ],
    A,
    "none",
    "the validating webhook configuration is kept by mesh-discovery",
  ),
  ...group(
    ["num_failed_outgoing_requests", "num_outgoing_requests", "num_outgoing_retries", "outgoing_latency"],
    D,
    "none",
    "requests to the CA: made by mesh-agent only",
  ),
  ...group(
    ["discovery_conflict_outbound_listener_http_over_current_tcp"],
    BOTH,
    "none",
    "HTTP ports take their wildcard listener before any TCP service, so this conflict cannot happen",
  ),
  ...group(
    ["discovery_invalid_out_listeners"],
    BOTH,
    "none",
    "outbound listeners are not dropped one by one after they are built (the reference never sets it either)",
  ),
  ...group(
    [
      "discovery_jwks_resolver_network_fetch_fail_total",
      "discovery_jwks_resolver_network_fetch_success_total",
    ],
    BOTH,
    "none",
    "keys at a jwksUri are fetched by the proxy (remote_jwks), not by mesh-discovery",
  ),
  ...group(
    [
      "sidecar_injection_failure_total",
      "sidecar_injection_requests_total",
      "sidecar_injection_skip_total",
      "sidecar_injection_success_total",
    ],
    A,
    "none",
    "sidecar injection runs in mesh-discovery",
  ),
  ...group(
    [
      "endpoint_no_pod",
      "discovery_conflict_inbound_listener",
      "discovery_conflict_outbound_listener_tcp_over_current_http",
      "discovery_conflict_outbound_listener_tcp_over_current_tcp",
      "discovery_destrule_subsets",
      "discovery_duplicate_proxy_clusters",
      "discovery_eds_no_instances",
      "discovery_endpoint_not_ready",
      "discovery_inbound_updates",
      "discovery_orch_endpoints_pending_pod",
      "discovery_orch_endpoints_with_no_pods",
      "discovery_orch_reg_events",
      "discovery_no_ip",
      "discovery_proxy_convergence_time",
      "discovery_proxy_queue_time",
      "discovery_push_triggers",
      "discovery_services",
      "discovery_total_rejected_configs",
      "discovery_total_xds_internal_errors",
      "discovery_total_xds_rejects",
      "discovery_virt_services",
      "discovery_vservice_dup_domain",
      "discovery_xds",
      "discovery_xds_cds_reject",
      "discovery_xds_eds_reject",
      "discovery_xds_expired_nonce",
      "discovery_xds_lds_reject",
      "discovery_xds_push_context_errors",
      "discovery_xds_push_time",
      "discovery_xds_pushes",
      "discovery_xds_rds_reject",
      "discovery_xds_send_time",
      "discovery_xds_write_timeout",
      "xds_cache_evictions",
      "xds_cache_reads",
      "xds_cache_size",
    ],
    A,
    "none",
    "a mesh-discovery metric, exported by mesh-agent as the reference does",
  ),
]);

/** The mark of metric `name` in `program`, if that program never moves it. */
export function notEmitted(program: MetricProgram, name: string): NotEmittedMetric | undefined {
  return NOT_EMITTED_METRICS.find((m) => m.name === name && m.programs.includes(program));
}
