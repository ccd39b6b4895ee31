/**
 * Every metric of both references, declared once with its reference type (Sum, Count, LastValue, Distribution),
 * the programs that export it, and its labels. Names are exported exactly as the references spell them.
 */

/** The metric types of the references. */
export type ReferenceKind = "Sum" | "Count" | "LastValue" | "Distribution";

/** Which programs export a metric. */
export type MetricProgram = "discovery" | "agent";

/** One declared metric. */
export interface MetricSpec {
  /** Name exactly as the reference exports it. */
  readonly name: string;
  /** The reference's metric type. */
  readonly kind: ReferenceKind;
  /** The programs that export it. */
  readonly programs: readonly MetricProgram[];
  /** Help text, exported with the metric. */
  readonly help: string;
}

const DISCOVERY: readonly MetricProgram[] = ["discovery"];
const AGENT: readonly MetricProgram[] = ["agent"];
const BOTH: readonly MetricProgram[] = ["discovery", "agent"];

/** The registry of metric names, generated from the reference tables. */
export const METRIC_SPECS: readonly MetricSpec[] = Object.freeze([
  {
    name: "ca_server_authentication_failure_count",
    kind: "Sum",
    programs: DISCOVERY,
    help: "Authentication failures.",
  },
  {
    name: "ca_server_cert_chain_expiry_timestamp",
    kind: "LastValue",
    programs: DISCOVERY,
    help: "Unix time in seconds when the CA cert chain expires; negative means expired.",
  },
  { name: "ca_server_csr_count", kind: "Sum", programs: DISCOVERY, help: "CSRs received." },
  {
    name: "ca_server_csr_parsing_err_count",
    kind: "Sum",
    programs: DISCOVERY,
    help: "Errors parsing a CSR.",
  },
  { name: "ca_server_csr_sign_err_count", kind: "Sum", programs: DISCOVERY, help: "Errors signing a CSR." },
  {
    name: "ca_server_csr_refused_count",
    kind: "Sum",
    programs: DISCOVERY,
    help:
      "CSRs refused before parsing, by reason: too_large (CASERVER_CSR_MAX_BYTES), rate_limited (the identity's CASERVER_CSR_RATE_LIMIT_*), queue_full (CASERVER_SIGNING_QUEUE_SIZE).",
  },
  {
    name: "ca_server_id_extraction_err_count",
    kind: "Sum",
    programs: DISCOVERY,
    help: "Errors extracting the ID from a CSR.",
  },
  {
    name: "ca_server_root_cert_expiry_timestamp",
    kind: "LastValue",
    programs: DISCOVERY,
    help: "Unix time in seconds when the root cert expires; negative means expired.",
  },
  {
    name: "ca_server_success_cert_issuance_count",
    kind: "Sum",
    programs: DISCOVERY,
    help: "Successful certificate issuances.",
  },
  {
    name: "config_runtime_processor_event_span_duration_milliseconds",
    kind: "Distribution",
    programs: DISCOVERY,
    help: "Duration between incoming events.",
  },
  {
    name: "config_runtime_processor_events_processed_total",
    kind: "Count",
    programs: DISCOVERY,
    help: "Events processed.",
  },
  {
    name: "config_runtime_processor_snapshot_events_total",
    kind: "Distribution",
    programs: DISCOVERY,
    help: "Events per snapshot.",
  },
  {
    name: "config_runtime_processor_snapshot_lifetime_duration_milliseconds",
    kind: "Distribution",
    programs: DISCOVERY,
    help: "Duration of each snapshot.",
  },
  {
    name: "config_runtime_processor_snapshots_published_total",
    kind: "Count",
    programs: DISCOVERY,
    help: "Snapshots published.",
  },
  {
    name: "config_runtime_state_type_instances_total",
    kind: "LastValue",
    programs: DISCOVERY,
    help: "Type instances per type URL.",
  },
  {
    name: "config_runtime_strategy_on_change_total",
    kind: "Count",
    programs: DISCOVERY,
    help: "Calls of the strategy's onChange.",
  },
  {
    name: "config_runtime_strategy_timer_max_time_reached_total",
    kind: "Count",
    programs: DISCOVERY,
    help: "Times the max time was reached.",
  },
  {
    name: "config_runtime_strategy_timer_quiesce_reached_total",
    kind: "Count",
    programs: DISCOVERY,
    help: "Times a quiesce was reached.",
  },
  {
    name: "config_runtime_strategy_timer_resets_total",
    kind: "Count",
    programs: DISCOVERY,
    help: "Timer resets.",
  },
  {
    name: "config_source_orch_dynamic_converter_failure_total",
    kind: "Count",
    programs: DISCOVERY,
    help: "Failed conversions by a dynamic orchestrator source.",
  },
  {
    name: "config_source_orch_dynamic_converter_success_total",
    kind: "Count",
    programs: DISCOVERY,
    help: "Successful conversions by a dynamic orchestrator source.",
  },
  {
    name: "config_source_orch_event_error_total",
    kind: "Count",
    programs: DISCOVERY,
    help: "Errors of an orchestrator source handling an event.",
  },
  {
    name: "config_source_orch_event_success_total",
    kind: "Count",
    programs: DISCOVERY,
    help: "Events handled successfully by an orchestrator source.",
  },
  { name: "config_validation_failed", kind: "Sum", programs: DISCOVERY, help: "Resource validation failed." },
  {
    name: "config_validation_http_error",
    kind: "Sum",
    programs: DISCOVERY,
    help: "Resource validation HTTP serve errors.",
  },
  { name: "config_validation_passed", kind: "Sum", programs: DISCOVERY, help: "Resources found valid." },
  {
    name: "mesh_mcp_clients_total",
    kind: "LastValue",
    programs: DISCOVERY,
    help: "Streams currently connected.",
  },
  {
    name: "mesh_mcp_message_sizes_bytes",
    kind: "Distribution",
    programs: DISCOVERY,
    help: "Size of messages received from clients.",
  },
  { name: "mesh_mcp_reconnections", kind: "Sum", programs: DISCOVERY, help: "Times the sink reconnected." },
  {
    name: "mesh_mcp_recv_failures_total",
    kind: "Sum",
    programs: DISCOVERY,
    help: "Receive failures in the source.",
  },
  {
    name: "mesh_mcp_request_acks_total",
    kind: "Sum",
    programs: DISCOVERY,
    help: "Request acks received by the source.",
  },
  {
    name: "mesh_mcp_request_nacks_total",
    kind: "Sum",
    programs: DISCOVERY,
    help: "Request nacks received by the source.",
  },
  {
    name: "mesh_mcp_send_failures_total",
    kind: "Sum",
    programs: DISCOVERY,
    help: "Send failures in the source.",
  },
  {
    name: "discovery_orch_cfg_events",
    kind: "Sum",
    programs: DISCOVERY,
    help: "Events from orchestrator config.",
  },
  {
    name: "discovery_remote_cluster_errors",
    kind: "Sum",
    programs: DISCOVERY,
    help:
      "Remote clusters refused or not reached, by reason: a kubeconfig that is not usable, a cluster id already added or the server's own, an API server that cannot be reached; each problem counted once.",
  },
  {
    name: "discovery_remote_clusters",
    kind: "LastValue",
    programs: DISCOVERY,
    help: "Remote clusters read from Secrets in --clusterRegistriesNamespace.",
  },
  {
    name: "discovery_gateway_credential_errors",
    kind: "Sum",
    programs: DISCOVERY,
    help:
      "Gateway credentials refused (orchestrator Secrets or MESHD_GATEWAY_CREDENTIALS_DIR folders that are unreadable, incomplete or not PEM), each problem counted once.",
  },
  {
    name: "discovery_leader",
    kind: "LastValue",
    programs: DISCOVERY,
    help: "1 while this replica leads the singleton duty named by the duty label (its Lease), else 0.",
  },
  {
    name: "discovery_orch_object_errors",
    kind: "LastValue",
    programs: DISCOVERY,
    help: "Errors converting orchestrator custom resources.",
  },
  {
    name: "discovery_total_orch_object_errors",
    kind: "Sum",
    programs: DISCOVERY,
    help: "Total errors converting orchestrator custom resources.",
  },
  {
    name: "endpoint_no_pod",
    kind: "LastValue",
    programs: BOTH,
    help: "Endpoints without an associated pod.",
  },
  {
    name: "config_validation_config_delete_error",
    kind: "Count",
    programs: BOTH,
    help: "Webhook configuration delete errors.",
  },
  {
    name: "config_validation_config_load",
    kind: "Count",
    programs: BOTH,
    help: "Webhook configuration (re)loads.",
  },
  {
    name: "config_validation_config_load_error",
    kind: "Count",
    programs: BOTH,
    help: "Webhook configuration (re)load errors.",
  },
  {
    name: "config_validation_config_update_error",
    kind: "Count",
    programs: BOTH,
    help: "Webhook configuration update errors.",
  },
  {
    name: "config_validation_config_updates",
    kind: "Count",
    programs: BOTH,
    help: "Webhook configuration updates.",
  },
  { name: "mesh_build", kind: "LastValue", programs: BOTH, help: "Component build info." },
  {
    name: "num_failed_outgoing_requests",
    kind: "Sum",
    programs: BOTH,
    help: "Failed outgoing requests (token exchange server, CA, etc.).",
  },
  { name: "num_outgoing_requests", kind: "Sum", programs: BOTH, help: "Total outgoing requests." },
  { name: "num_outgoing_retries", kind: "Sum", programs: BOTH, help: "Outgoing retry requests." },
  {
    name: "outgoing_latency",
    kind: "Sum",
    programs: BOTH,
    help: "Latency of outgoing requests, milliseconds.",
  },
  {
    name: "discovery_conflict_inbound_listener",
    kind: "LastValue",
    programs: BOTH,
    help: "Conflicting inbound listeners.",
  },
  {
    name: "discovery_conflict_outbound_listener_http_over_current_tcp",
    kind: "LastValue",
    programs: BOTH,
    help: "Wildcard HTTP listeners conflicting with the current wildcard TCP listener.",
  },
  {
    name: "discovery_conflict_outbound_listener_tcp_over_current_http",
    kind: "LastValue",
    programs: BOTH,
    help: "Wildcard TCP listeners conflicting with the current wildcard HTTP listener.",
  },
  {
    name: "discovery_conflict_outbound_listener_tcp_over_current_tcp",
    kind: "LastValue",
    programs: BOTH,
    help: "TCP listeners conflicting with the current TCP listener.",
  },
  {
    name: "discovery_destrule_subsets",
    kind: "LastValue",
    programs: BOTH,
    help: "Duplicate subsets across destination rules for the same host.",
  },
  {
    name: "discovery_duplicate_proxy_clusters",
    kind: "LastValue",
    programs: BOTH,
    help: "Duplicate proxy clusters from service entries with the same hostname.",
  },
  {
    name: "discovery_eds_no_instances",
    kind: "LastValue",
    programs: BOTH,
    help: "Clusters without instances.",
  },
  {
    name: "discovery_endpoint_not_ready",
    kind: "LastValue",
    programs: BOTH,
    help: "Endpoints found unready.",
  },
  { name: "discovery_inbound_updates", kind: "Sum", programs: BOTH, help: "Updates received." },
  {
    name: "discovery_invalid_out_listeners",
    kind: "LastValue",
    programs: BOTH,
    help: "Invalid outbound listeners.",
  },
  {
    name: "discovery_jwks_resolver_network_fetch_fail_total",
    kind: "Sum",
    programs: BOTH,
    help: "Failed network fetches by the JWKS resolver.",
  },
  {
    name: "discovery_jwks_resolver_network_fetch_success_total",
    kind: "Sum",
    programs: BOTH,
    help: "Successful network fetches by the JWKS resolver.",
  },
  {
    name: "discovery_orch_endpoints_pending_pod",
    kind: "LastValue",
    programs: BOTH,
    help: "Endpoints currently without a corresponding pod.",
  },
  {
    name: "discovery_orch_endpoints_with_no_pods",
    kind: "Sum",
    programs: BOTH,
    help: "Endpoints without a corresponding pod.",
  },
  {
    name: "discovery_orch_reg_events",
    kind: "Sum",
    programs: BOTH,
    help: "Events from the orchestrator registry.",
  },
  {
    name: "discovery_no_ip",
    kind: "LastValue",
    programs: BOTH,
    help: "Pods not found in the endpoint table, possibly invalid.",
  },
  {
    name: "discovery_proxy_convergence_time",
    kind: "Distribution",
    programs: BOTH,
    help: "Seconds between a config change and a proxy receiving all required config.",
  },
  {
    name: "discovery_proxy_queue_time",
    kind: "Distribution",
    programs: BOTH,
    help: "Seconds a proxy waits in the push queue.",
  },
  {
    name: "discovery_push_triggers",
    kind: "Sum",
    programs: BOTH,
    help: "Times a push was triggered, labeled by reason.",
  },
  { name: "discovery_services", kind: "LastValue", programs: BOTH, help: "Services known." },
  {
    name: "discovery_total_rejected_configs",
    kind: "Sum",
    programs: BOTH,
    help: "Configs rejected or ignored.",
  },
  { name: "discovery_total_xds_internal_errors", kind: "Sum", programs: BOTH, help: "Internal xDS errors." },
  {
    name: "discovery_total_xds_rejects",
    kind: "Sum",
    programs: BOTH,
    help: "xDS responses rejected by a proxy.",
  },
  { name: "discovery_virt_services", kind: "LastValue", programs: BOTH, help: "Virtual services known." },
  {
    name: "discovery_vservice_dup_domain",
    kind: "LastValue",
    programs: BOTH,
    help: "Virtual services with duplicate domains.",
  },
  { name: "discovery_xds", kind: "LastValue", programs: BOTH, help: "Endpoints connected using xDS." },
  { name: "discovery_xds_cds_reject", kind: "LastValue", programs: BOTH, help: "Rejected CDS configs." },
  { name: "discovery_xds_eds_reject", kind: "LastValue", programs: BOTH, help: "Rejected EDS." },
  {
    name: "discovery_xds_expired_nonce",
    kind: "Sum",
    programs: BOTH,
    help: "xDS requests with an expired nonce.",
  },
  { name: "discovery_xds_lds_reject", kind: "LastValue", programs: BOTH, help: "Rejected LDS." },
  {
    name: "discovery_xds_push_context_errors",
    kind: "Sum",
    programs: BOTH,
    help: "Errors (timeouts) initiating the push context.",
  },
  {
    name: "discovery_xds_push_time",
    kind: "Distribution",
    programs: BOTH,
    help: "Total seconds to push LDS, RDS, CDS and EDS.",
  },
  {
    name: "discovery_xds_pushes",
    kind: "Sum",
    programs: BOTH,
    help: "Build and send errors for LDS, RDS, CDS and EDS.",
  },
  { name: "discovery_xds_rds_reject", kind: "LastValue", programs: BOTH, help: "Rejected RDS." },
  {
    name: "discovery_xds_send_time",
    kind: "Distribution",
    programs: BOTH,
    help: "Total seconds to send generated configuration.",
  },
  { name: "discovery_xds_write_timeout", kind: "Sum", programs: BOTH, help: "xDS response write timeouts." },
  {
    name: "discovery_xds_refused_streams",
    kind: "Sum",
    programs: DISCOVERY,
    help: "ADS streams the server ended over what the peer sent, by gRPC status code.",
  },
  {
    name: "discovery_xds_dropped_connections",
    kind: "Sum",
    programs: DISCOVERY,
    help:
      "Connections to the xDS ports the transport dropped for misbehaving (not HTTP/2, protocol error, TLS error, handshake timeout) or closed on accept past a connection bound or an address's budget of new connections, by reason.",
  },
  {
    name: "discovery_xds_closed_sessions",
    kind: "Sum",
    programs: DISCOVERY,
    help:
      "HTTP/2 sessions of the xDS ports that closed. On Deno 2.9.3 each keeps 6-20 KiB of native memory for the life of the process (docs/deno_pin.md).",
  },
  {
    name: "discovery_heap_collections",
    kind: "Sum",
    programs: DISCOVERY,
    help:
      "Full, heap-shrinking garbage collections the server ran once quiet after a burst of traffic (DISCOVERY_COLLECT_AFTER_BURST_BYTES).",
  },
  {
    name: "discovery_xds_rejected_streams",
    kind: "Sum",
    programs: DISCOVERY,
    help:
      "gRPC streams on the xDS ports refused with RESOURCE_EXHAUSTED past a stream bound (server_stream_limit, peer_stream_limit), by reason.",
  },
  {
    name: "http_server_refused",
    kind: "Sum",
    programs: BOTH,
    help:
      "Connections and requests an HTTP listener refused or closed at its limits (connections, peer_connections, evicted, requests, peer_requests, body_bytes, peer_body_bytes; the debug interface: responses), by server and reason.",
  },
  { name: "scrape_failures_total", kind: "Sum", programs: BOTH, help: "Failed scrapes." },
  { name: "scrapes_total", kind: "Sum", programs: BOTH, help: "Scrapes." },
  {
    name: "sidecar_injection_failure_total",
    kind: "Sum",
    programs: BOTH,
    help: "Failed sidecar injection requests.",
  },
  {
    name: "sidecar_injection_requests_total",
    kind: "Sum",
    programs: BOTH,
    help: "Sidecar injection requests.",
  },
  {
    name: "sidecar_injection_skip_total",
    kind: "Sum",
    programs: BOTH,
    help: "Skipped sidecar injection requests.",
  },
  {
    name: "sidecar_injection_success_total",
    kind: "Sum",
    programs: BOTH,
    help: "Successful sidecar injection requests.",
  },
  {
    name: "startup_duration_seconds",
    kind: "LastValue",
    programs: BOTH,
    help: "Time from process start to being marked ready.",
  },
  { name: "xds_cache_evictions", kind: "Sum", programs: BOTH, help: "xDS cache evictions." },
  { name: "xds_cache_reads", kind: "Sum", programs: BOTH, help: "xDS cache reads." },
  { name: "xds_cache_size", kind: "LastValue", programs: BOTH, help: "Current xDS cache size." },
  // The reference counts these up and down as a Sum; as a Prometheus counter it could not go down.
  { name: "total_active_connections", kind: "LastValue", programs: AGENT, help: "Active SDS connections." },
  { name: "total_push_errors", kind: "Sum", programs: AGENT, help: "Failed SDS pushes." },
  { name: "total_pushes", kind: "Sum", programs: AGENT, help: "SDS pushes." },
  {
    name: "total_secret_update_failures",
    kind: "Sum",
    programs: AGENT,
    help: "Dynamic secret update failures reported by the proxy.",
  },
  { name: "total_stale_connections", kind: "Sum", programs: AGENT, help: "Stale SDS connections." },
  // The agent's xDS relay, as the reference's agent names them (istiod → meshd).
  {
    name: "meshd_connection_failures",
    kind: "Sum",
    programs: AGENT,
    help: "Upstream ADS streams to the discovery server that failed before any response.",
  },
  {
    name: "meshd_connection_terminations",
    kind: "Sum",
    programs: AGENT,
    help: "Upstream ADS streams to the discovery server that ended after a response, by type.",
  },
  {
    name: "envoy_connection_terminations",
    kind: "Sum",
    programs: AGENT,
    help: "The proxy's ADS streams to the agent that ended with an error or cancellation, by type.",
  },
  { name: "xds_proxy_requests", kind: "Sum", programs: AGENT, help: "Requests the proxy sent to the relay." },
  {
    name: "xds_proxy_responses",
    kind: "Sum",
    programs: AGENT,
    help: "Responses the relay passed from the discovery server to the proxy.",
  },
  {
    name: "xds_proxy_upstream_reconnects",
    kind: "Sum",
    programs: AGENT,
    help:
      "Not in the reference. Upstream ADS streams opened again under a proxy stream that stayed open, by reason.",
  },
  // The agent's DNS proxy; Istio's agent exports the first four from 1.10 on (1.9 exports none).
  { name: "dns_requests_total", kind: "Sum", programs: AGENT, help: "Total number of DNS requests." },
  {
    name: "dns_upstream_requests_total",
    kind: "Sum",
    programs: AGENT,
    help: "Total number of DNS requests forwarded to upstream.",
  },
  {
    name: "dns_upstream_failures_total",
    kind: "Sum",
    programs: AGENT,
    help: "Total number of DNS requests forwarded to upstream that got no answer.",
  },
  {
    name: "dns_upstream_request_duration_seconds",
    kind: "Distribution",
    programs: AGENT,
    help: "Time in seconds the agent takes to get a DNS response from upstream.",
  },
  {
    name: "dns_malformed_requests_total",
    kind: "Sum",
    programs: AGENT,
    help: "DNS requests dropped unanswered because they are not a readable DNS query.",
  },
  {
    name: "discovery_config_source_lost",
    kind: "LastValue",
    programs: DISCOVERY,
    help: "1 while a configured file source (directory or file) is missing, 0 while it is watched.",
  },
  {
    name: "discovery_config_source_unreadable_paths",
    kind: "LastValue",
    programs: DISCOVERY,
    help: "Folders under a config directory that could not be read; the config last read from them is kept.",
  },
  {
    name: "discovery_config_source_held_empty",
    kind: "LastValue",
    programs: DISCOVERY,
    help: "1 while a config directory has no config file and the config last loaded from it is kept.",
  },
  {
    name: "discovery_config_source_empty_withdrawals",
    kind: "Sum",
    programs: DISCOVERY,
    help:
      "Times a config directory stayed empty for MESHD_CONFIG_DIR_EMPTY_WITHDRAW_AFTER and its config was withdrawn.",
  },
  {
    name: "discovery_config_source_skipped_paths",
    kind: "LastValue",
    programs: DISCOVERY,
    help:
      "Entries under a config directory not read: not regular files (FIFOs, sockets, devices) or links leaving it.",
  },
  {
    name: "discovery_envoy_filter_rejected_patches",
    kind: "Sum",
    programs: DISCOVERY,
    help: "EnvoyFilter patches skipped because they made a generated resource invalid, by filter and type.",
  },
  // Of the process collector Go programs export by default (the references' among them), what the runtime
  // tells without reading /proc/self, which Deno allows only with every permission.
  {
    name: "process_cpu_seconds_total",
    kind: "Sum",
    programs: BOTH,
    help: "Total user and system CPU time spent in seconds.",
  },
  {
    name: "process_resident_memory_bytes",
    kind: "LastValue",
    programs: BOTH,
    help: "Resident memory size in bytes.",
  },
  {
    name: "process_start_time_seconds",
    kind: "LastValue",
    programs: BOTH,
    help: "Start time of the process since the Unix epoch in seconds.",
  },
]);

/** Label names per metric, as Istio 1.9 labels the same metrics; metrics not listed have none. */
export const METRIC_LABELS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  mesh_build: ["component", "tag"],
  discovery_leader: ["duty"],
  discovery_push_triggers: ["type"],
  discovery_xds_pushes: ["type"],
  discovery_total_xds_rejects: ["type"],
  discovery_total_rejected_configs: ["type"],
  discovery_xds_push_time: ["type"],
  discovery_xds_send_time: ["type"],
  discovery_duplicate_proxy_clusters: ["cluster"],
  discovery_eds_no_instances: ["cluster"],
  discovery_xds_cds_reject: ["node", "err"],
  discovery_envoy_filter_rejected_patches: ["envoy_filter", "type"],
  discovery_xds_eds_reject: ["node", "err"],
  discovery_xds_lds_reject: ["node", "err"],
  discovery_xds_rds_reject: ["node", "err"],
  discovery_xds_expired_nonce: ["type"],
  discovery_xds_refused_streams: ["code"],
  discovery_xds_dropped_connections: ["reason"],
  ca_server_csr_refused_count: ["reason"],
  discovery_xds_rejected_streams: ["reason"],
  discovery_total_xds_internal_errors: ["type"],
  discovery_inbound_updates: ["type"],
  config_validation_passed: ["group", "version", "resource"],
  config_validation_failed: ["group", "version", "resource", "reason"],
  config_validation_http_error: ["status"],
  config_validation_config_update_error: ["reason"],
  config_validation_config_load_error: ["reason"],
  http_server_refused: ["server", "reason"],
  xds_cache_reads: ["type"],
  config_runtime_state_type_instances_total: ["collection"],
  num_outgoing_requests: ["request_type"],
  num_failed_outgoing_requests: ["request_type"],
  num_outgoing_retries: ["request_type"],
  outgoing_latency: ["request_type"],
  total_push_errors: ["resource_name"],
  total_secret_update_failures: ["resource_name"],
  sidecar_injection_skip_total: ["reason"],
  sidecar_injection_failure_total: ["type"],
  discovery_orch_reg_events: ["type", "event"],
  discovery_remote_cluster_errors: ["reason"],
  discovery_orch_cfg_events: ["type", "event"],
  discovery_config_source_lost: ["source"],
  discovery_config_source_unreadable_paths: ["source"],
  discovery_config_source_held_empty: ["source"],
  discovery_config_source_empty_withdrawals: ["source"],
  discovery_config_source_skipped_paths: ["source", "reason"],
  scrape_failures_total: ["type"],
  meshd_connection_terminations: ["type"],
  envoy_connection_terminations: ["type"],
  xds_proxy_upstream_reconnects: ["reason"],
});

/** Histogram buckets chosen by the unit in a metric's name or help text. */
export function bucketsFor(spec: MetricSpec): number[] {
  if (/milliseconds/.test(spec.name)) return [1, 5, 10, 50, 100, 500, 1000, 5000, 10000, 60000];
  if (/bytes|sizes/.test(spec.name)) return [256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304];
  if (/_total$|events_total/.test(spec.name)) return [1, 2, 5, 10, 20, 50, 100, 500, 1000];
  return [0.001, 0.01, 0.1, 0.5, 1, 3, 5, 10, 20, 30];
}
