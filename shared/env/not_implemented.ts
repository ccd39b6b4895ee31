import type { Program } from "./env_vars.ts";

/**
 * The settings of the reference that change nothing here yet, kept apart from the registry entries so that a
 * branch building one removes a single line. Setting one logs one warning at startup, `/debug/env` marks it and
 * docs/settings.md lists it; `tests/settings_rule_test.ts` fails when a setting is neither read nor listed.
 */

/** One environment variable or flag that is accepted and has no effect in some programs. */
export interface NotImplementedSetting {
  /** The variable's name, or the flag's name without dashes. */
  readonly name: string;
  /** The programs in which it has no effect. */
  readonly programs: readonly Program[];
  /** The issue that will build it (`#28`), or `none` where no program here will ever use it. */
  readonly issue: string;
  /** Why it does nothing, shown in the startup warning. */
  readonly reason: string;
}

/** One flag of one command that is accepted and has no effect. */
export interface NotImplementedFlag extends NotImplementedSetting {
  /** The subcommand that accepts it (`discovery`, `proxy`). */
  readonly command: string;
}

const D: readonly Program[] = ["discovery"];
const A: readonly Program[] = ["agent"];
const BOTH: readonly Program[] = ["discovery", "agent"];

function entry(
  name: string,
  programs: readonly Program[],
  issue: string,
  reason: string,
): NotImplementedSetting {
  return Object.freeze({ name, programs, issue, reason });
}

const DISCOVERY_ONLY = "a mesh-discovery setting that mesh-agent does not use";
const AGENT_ONLY = "a mesh-agent setting that mesh-discovery does not use";

/** Variables read by one program that the other declares (the reference lists them for both) and ignores. */
const OTHER_PROGRAM: readonly NotImplementedSetting[] = [
  ...[
    "CENTRAL_MESHD",
    "CLUSTER_ID",
    "ENABLE_ADMIN_ENDPOINTS",
    "ENABLE_CA_SERVER",
    "ENABLE_DEBUG_ON_HTTP",
    "EXTERNAL_MESHD",
    "MESHD_CUSTOM_HOST",
    "MESHD_ENABLE_SDS_SERVER",
    "MESH_GPRC_MAXSTREAMS",
    "REQUIRE_3P_TOKEN",
    "SPIFFE_BUNDLE_ENDPOINTS",
    "TOKEN_AUDIENCES",
    "XDS_AUTH",
    "DISCOVERY_DEBOUNCE_AFTER",
    "DISCOVERY_DEBOUNCE_MAX",
    "DISCOVERY_DISTRIBUTION_HISTORY_RETENTION",
    "DISCOVERY_ENABLE_CONFIG_DISTRIBUTION_TRACKING",
    "DISCOVERY_ENABLE_EDS_DEBOUNCE",
    "DISCOVERY_ENABLE_EDS_FOR_HEADLESS_SERVICES",
    "DISCOVERY_ENABLE_ORCH_SELECT_WORKLOAD_ENTRIES",
    "DISCOVERY_ENABLE_PROTOCOL_SNIFFING_FOR_INBOUND",
    "DISCOVERY_ENABLE_PROTOCOL_SNIFFING_FOR_OUTBOUND",
    "DISCOVERY_ENABLE_MYSQL_FILTER",
    "DISCOVERY_ENABLE_REDIS_FILTER",
    "DISCOVERY_ENABLE_THRIFT_FILTER",
    "DISCOVERY_ENABLE_SERVICEENTRY_SELECT_PODS",
    "DISCOVERY_ENABLE_VIRTUAL_SERVICE_DELEGATE",
    "DISCOVERY_ENABLE_XDS_CACHE",
    "DISCOVERY_ENABLE_XDS_IDENTITY_CHECK",
    "DISCOVERY_FILTER_GATEWAY_CLUSTER_CONFIG",
    "DISCOVERY_HTTP10",
    "DISCOVERY_INITIAL_FETCH_TIMEOUT",
    "DISCOVERY_INBOUND_PROTOCOL_DETECTION_TIMEOUT",
    "DISCOVERY_PUSH_THROTTLE",
    "DISCOVERY_SCOPE_GATEWAY_TO_NAMESPACE",
    "DISCOVERY_SIDECAR_USE_REMOTE_ADDRESS",
    "DISCOVERY_TRACE_SAMPLING",
    "DISCOVERY_SIDECAR_ENABLE_INBOUND_TLS_V2",
    "DISCOVERY_SKIP_VALIDATE_TRUST_DOMAIN",
    "DISCOVERY_USE_ENDPOINT_SLICE",
    "DISCOVERY_XDS_CACHE_SIZE",
    "DISCOVERY_XDS_CACHE_STATS",
    "DISCOVERY_XDS_SEND_TIMEOUT",
    "DISCOVERY_ENABLE_WORKLOAD_ENTRY_AUTOREGISTRATION",
    "DISCOVERY_WORKLOAD_ENTRY_GRACE_PERIOD",
    "DISCOVERY_ENABLE_STATUS",
    "DISCOVERY_STATUS_BURST",
    "DISCOVERY_STATUS_QPS",
    "MESH_DEFAULT_REQUEST_TIMEOUT",
    "DISCOVERY_ENABLE_TCP_METADATA_EXCHANGE",
    "DISCOVERY_ENDPOINT_TELEMETRY_LABEL",
    "DISCOVERY_ENABLE_HEADLESS_SERVICE_POD_LISTENERS",
    "DISCOVERY_ALLOW_METADATA_CERTS_DR_MUTUAL_TLS",
  ].map((name) => entry(name, A, "none", DISCOVERY_ONLY)),
  ...["MESH_METRICS_ANNOTATIONS", "TERMINATION_DRAIN_DURATION_SECONDS"].map((name) =>
    entry(name, D, "none", AGENT_ONLY)
  ),
];

/** Every environment variable of the reference that is accepted and changes nothing, by program. */
export const NOT_IMPLEMENTED_ENV: readonly NotImplementedSetting[] = Object.freeze([
  ...OTHER_PROGRAM,
  entry("INJECTION_WEBHOOK_CONFIG_NAME", A, "none", DISCOVERY_ONLY),
  entry("ENABLE_LEGACY_FSGROUP_INJECTION", A, "none", DISCOVERY_ONLY),
  entry(
    "INGRESS_GATEWAY_NAMESPACE",
    BOTH,
    "none",
    "Istio 1.9 declares it and reads it nowhere; Ingress Gateways go to ORCH_INGRESS_NS",
  ),
  entry("ORCH_INGRESS_NS", A, "none", DISCOVERY_ONLY),
  entry(
    "SECRET_WATCHER_RESYNC_PERIOD",
    BOTH,
    "none",
    "Istio 1.9 declares it and reads it nowhere; Secrets are watched, a dropped watch relists",
  ),
  entry("DISCOVERY_ENABLED_SERVICE_APIS", BOTH, "none", "the service APIs (Gateway API) are not read"),
  entry("DISCOVERY_ENABLE_ANALYSIS", A, "none", DISCOVERY_ONLY),
  entry(
    "DISCOVERY_ENABLE_CRD_VALIDATION",
    BOTH,
    "none",
    "every config object is validated whatever its value",
  ),
  entry("DISCOVERY_ENABLE_INCREMENTAL_MCP", BOTH, "none", "MCP is not built"),
  entry(
    "CREDENTIAL_IDENTITY_PROVIDER",
    A,
    "none",
    "audience of the cloud VM credential fetcher; no cloud metadata server here",
  ),
  entry(
    "ENABLE_INGRESS_GATEWAY_SDS",
    A,
    "none",
    "Istio 1.9 declares it and reads it nowhere; gateway SDS is served whatever its value",
  ),
  entry(
    "LOCAL_XDS_GENERATOR",
    A,
    "none",
    "Istio 1.9 reads it nowhere; the agent relays mesh-discovery's xDS",
  ),
]);

/** The issue that builds each flag's feature, where it is not #31. */
const FLAG_ISSUES: Readonly<Record<string, string>> = {
  mcpInitialConnWindowSize: "none",
  mcpInitialWindowSize: "none",
  mcpMaxMsgSize: "none",
};

/** Every flag of the reference that is accepted and changes nothing. */
export const NOT_IMPLEMENTED_FLAGS: readonly NotImplementedFlag[] = Object.freeze(
  [
    ["discovery", "mcpInitialConnWindowSize", "MCP is not built"],
    ["discovery", "mcpInitialWindowSize", "MCP is not built"],
    ["discovery", "mcpMaxMsgSize", "MCP is not built"],
  ].map(([command, name, reason]) =>
    Object.freeze({
      ...entry(name, command === "discovery" ? D : A, FLAG_ISSUES[name] ?? "#31", reason),
      command,
    })
  ),
);

/** The mark of variable `name` in `program`, if it has no effect there. */
export function notImplementedEnv(program: Program, name: string): NotImplementedSetting | undefined {
  return NOT_IMPLEMENTED_ENV.find((s) => s.name === name && s.programs.includes(program));
}
