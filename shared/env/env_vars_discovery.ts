import type { EnvVarSpec, Program } from "./env_vars.ts";

const DISCOVERY: readonly Program[] = ["discovery"];

/** Variables only the discovery program reads (mesh-discovery.md 4.5). */
export const DISCOVERY_ENV_VARS: readonly EnvVarSpec[] = [
  {
    name: "DISCOVERY_LEADER_ELECTION_TTL",
    type: "duration",
    default: "30s",
    programs: DISCOVERY,
    description:
      "Not in the reference (it fixes 30s). How long a replica's Lease on a singleton duty lasts unrenewed; the leader gives the duty up when renewing has failed for half of it, and replicas try every quarter of it. From 1s to 10m.",
  },
  {
    name: "MESHD_GATEWAY_CREDENTIALS_DIR",
    type: "string",
    default: "",
    programs: DISCOVERY,
    description:
      "Not in the reference. A directory of gateway credentials, <dir>/<namespace>/<credentialName>/ holding tls.crt, tls.key and optionally ca.crt, served over SDS beside the orchestrator's Secrets; empty: none.",
  },
  {
    name: "CASERVER_CSR_MAX_BYTES",
    type: "int",
    default: "16384",
    programs: DISCOVERY,
    description:
      "Not in the reference. The longest CSR (PEM text, bytes) the CA accepts; longer ones are refused with INVALID_ARGUMENT before they are parsed. From 1024 to 1048576.",
  },
  {
    name: "CASERVER_CSR_RATE_LIMIT_BURST",
    type: "int",
    default: "10",
    programs: DISCOVERY,
    description:
      "Not in the reference. Certificate requests one identity may send at once before CASERVER_CSR_RATE_LIMIT_QPS applies; more are refused with RESOURCE_EXHAUSTED. From 1 to 1000000.",
  },
  {
    name: "CASERVER_CSR_RATE_LIMIT_QPS",
    type: "float",
    default: "5",
    programs: DISCOVERY,
    description:
      "Not in the reference. Certificate requests per second one identity may send after its burst. From 0.001 to 1000000.",
  },
  {
    name: "CASERVER_MAX_CONCURRENT_SIGNINGS",
    type: "int",
    default: "2",
    programs: DISCOVERY,
    description:
      "Not in the reference. CSRs parsed and signed at once; the rest wait in the signing queue. From 1 to 1024.",
  },
  {
    name: "CASERVER_SIGNING_QUEUE_SIZE",
    type: "int",
    default: "1024",
    programs: DISCOVERY,
    description:
      "Not in the reference. CSRs waiting to be signed at most; past it requests are refused with RESOURCE_EXHAUSTED. From 0 to 1000000.",
  },
  {
    name: "DISCOVERY_NATIVE_HEAP_TRIM_INTERVAL",
    type: "duration",
    default: "15s",
    programs: DISCOVERY,
    description:
      "Not in the reference. How often glibc's malloc_trim hands free native heap pages back to the kernel, so memory a flood of connections took is returned once they are gone; needs --allow-ffi for the system library directories. 0s: never. At most 1h.",
  },
  {
    name: "DISCOVERY_COLLECT_AFTER_BURST_BYTES",
    type: "int",
    default: "33554432",
    programs: DISCOVERY,
    description:
      "Not in the reference. Once peers have sent at least this many bytes (request messages and bodies, 16 KiB per ended call) and the server has then been quiet for 10 s (no push or build in flight, less than 1/16 of it received per 5 s), it runs one full garbage collection that shrinks the heap (at most once a minute), so memory a burst of clients left is returned; needs --expose-gc in the V8 flags. 0: never. At most 1099511627776.",
  },
  {
    name: "MESHD_CONFIG_DIR_EMPTY_WITHDRAW_AFTER",
    type: "duration",
    default: "0s",
    programs: DISCOVERY,
    description:
      "Not in the reference. How long --configDir must stay without config files before the resources loaded from it are withdrawn; 0s: never, the last config is kept until files are back.",
  },
  {
    name: "MESHD_CONFIG_DIR_FOLLOW_EXTERNAL_LINKS",
    type: "bool",
    default: "false",
    programs: DISCOVERY,
    description:
      "Not in the reference. When true, symbolic links under --configDir may lead out of it; by default such links are skipped (links inside it, such as an orchestrator volume's ..data, are followed).",
  },
  {
    name: "AUDIENCE",
    type: "string",
    default: "",
    programs: DISCOVERY,
    description: "Expected audience in tokens.",
  },
  {
    name: "CASERVER_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR",
    type: "bool",
    default: "true",
    programs: DISCOVERY,
    description:
      "When true, the root cert rotator start is delayed by a jitter (seconds) below the root cert check interval.",
  },
  {
    name: "CASERVER_SELF_SIGNED_CA_CERT_TTL",
    type: "duration",
    default: "87600h0m0s",
    programs: DISCOVERY,
    description: "TTL of the self-signed CA root certificate.",
  },
  {
    name: "CASERVER_SELF_SIGNED_CA_RSA_KEY_SIZE",
    type: "int",
    default: "2048",
    programs: DISCOVERY,
    description: "RSA key size for self-signed CA certificates.",
  },
  {
    name: "CASERVER_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL",
    type: "duration",
    default: "1h0m0s",
    programs: DISCOVERY,
    description:
      "Interval at which the self-signed CA checks root cert expiry and rotates it. Zero or negative disables check and rotation. Suggested to be larger than 10 minutes.",
  },
  {
    name: "CASERVER_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE",
    type: "int",
    default: "20",
    programs: DISCOVERY,
    description: "Grace period percentile for the self-signed root cert.",
  },
  {
    name: "DEFAULT_WORKLOAD_CERT_TTL",
    type: "duration",
    default: "24h0m0s",
    programs: DISCOVERY,
    description:
      "Default TTL of issued workload certificates; applied when the CSR carries a non-positive TTL.",
  },
  {
    name: "EXTERNAL_CA",
    type: "string",
    default: "",
    programs: DISCOVERY,
    description: "External CA integration type. Permitted values: MESHD_RA_ORCH_API, MESHD_RA_MESH_API.",
  },
  {
    name: "INJECT_ENABLED",
    type: "bool",
    default: "true",
    programs: DISCOVERY,
    description: "Enables the mutating webhook handler.",
  },
  {
    name: "ORCH_SERVICE_HOST",
    type: "string",
    default: "",
    programs: DISCOVERY,
    description: "Orchestrator service host; set automatically when running in-cluster.",
  },
  {
    name: "ORCH_SIGNER",
    type: "string",
    default: "",
    programs: DISCOVERY,
    description: "Orchestrator CA signer type; valid from orchestrator version 1.18.",
  },
  {
    name: "MAX_WORKLOAD_CERT_TTL",
    type: "duration",
    default: "2160h0m0s",
    programs: DISCOVERY,
    description: "Maximum TTL of issued workload certificates.",
  },
  { name: "REVISION", type: "string", default: "", programs: DISCOVERY, description: "" },
  {
    name: "ROOT_CA_DIR",
    type: "string",
    default: "./etc/cacerts",
    programs: DISCOVERY,
    description: "Location of a local or mounted CA root.",
  },
  {
    name: "TOKEN_ISSUER",
    type: "string",
    default: "",
    programs: DISCOVERY,
    description: "OIDC token issuer; when set, used to check tokens.",
  },
  {
    name: "USE_REMOTE_CERTS",
    type: "bool",
    default: "false",
    programs: DISCOVERY,
    description: "Try to load CA certs from a remote cluster; used for an external discovery daemon.",
  },
  {
    name: "VALIDATION_ENABLED",
    type: "bool",
    default: "true",
    programs: DISCOVERY,
    description: "Enables the config validation handler.",
  },
  {
    name: "VALIDATION_WEBHOOK_CONFIG_NAME",
    type: "string",
    default: "meshd-${namespace}",
    programs: DISCOVERY,
    description:
      "Name of the validating webhook configuration to patch; when empty, patching with cluster-admin rights is skipped.",
  },
  {
    name: "DISCOVERY_WORKLOAD_ENTRY_VALIDATE_IDENTITY",
    type: "bool",
    default: "true",
    programs: DISCOVERY,
    description:
      "Not in the reference (its later releases check the same, as ISTIO_WORKLOAD_ENTRY_VALIDATE_IDENTITY). An auto-registering proxy must have proved, by client certificate or token on the secure xDS port, an identity in its namespace and of the WorkloadEntry's service account; false registers on node metadata alone, which any client of the plaintext port can write.",
  },
  {
    name: "DISCOVERY_XDS_MAX_NAME_LENGTH",
    type: "int",
    default: "2048",
    programs: DISCOVERY,
    description:
      "Not in the reference. Longest resource name, type URL or delta resource version an ADS request may carry, in characters; a longer one ends the stream with INVALID_ARGUMENT.",
  },
  {
    name: "DISCOVERY_XDS_MAX_NAMES_PER_STREAM",
    type: "int",
    default: "100000",
    programs: DISCOVERY,
    description:
      "Not in the reference. Most resource names one ADS stream may subscribe to over all its types (a watch's type URL and a delta stream's initial_resource_versions count too); past it the stream ends with RESOURCE_EXHAUSTED.",
  },
  {
    name: "DISCOVERY_XDS_MAX_NAME_CHARS_PER_CONNECTION",
    type: "int",
    default: "33554432",
    programs: DISCOVERY,
    description:
      "Not in the reference. Most characters of resource names the ADS streams of one HTTP/2 connection may hold together; past it the stream subscribing more ends with RESOURCE_EXHAUSTED.",
  },
  {
    name: "DISCOVERY_HTTP_MAX_CONNECTIONS",
    type: "int",
    default: "1024",
    programs: DISCOVERY,
    description:
      "Not in the reference. Connections each HTTP listener (8080, 15014, 15017, ControlZ) holds at once; past it the one idle the longest is closed, or the newcomer refused when every one has a request in progress.",
  },
  {
    name: "DISCOVERY_HTTP_MAX_CONNECTIONS_PER_PEER",
    type: "int",
    default: "64",
    programs: DISCOVERY,
    description:
      "Not in the reference. Connections one client address holds at once on each HTTP listener; past it that client's connection idle the longest is closed, or the newcomer refused.",
  },
  {
    name: "DISCOVERY_HTTP_MAX_REQUESTS",
    type: "int",
    default: "256",
    programs: DISCOVERY,
    description:
      "Not in the reference. Requests each HTTP listener handles at once; more are answered 503 with Retry-After before their body is read.",
  },
  {
    name: "DISCOVERY_HTTP_MAX_REQUESTS_PER_PEER",
    type: "int",
    default: "64",
    programs: DISCOVERY,
    description:
      "Not in the reference. Requests one client address has handled at once on each HTTP listener; more are answered 429 with Retry-After before their body is read.",
  },
  {
    name: "DISCOVERY_HTTP_MAX_BODY_BYTES",
    type: "int",
    default: "67108864",
    programs: DISCOVERY,
    description:
      "Not in the reference. Request body bytes each HTTP listener holds at once (declared lengths are reserved on arrival); a request that would pass it is answered 503.",
  },
  {
    name: "DISCOVERY_HTTP_MAX_BODY_BYTES_PER_PEER",
    type: "int",
    default: "16777216",
    programs: DISCOVERY,
    description:
      "Not in the reference. Request body bytes one client address holds at once on each HTTP listener; past it 429.",
  },
  {
    name: "DEBUG_REMOTE_ACCESS",
    type: "bool",
    default: "false",
    programs: DISCOVERY,
    description:
      "When true, debug paths that reveal the environment or the full config (/debug/configz, /debug/env, /debug/mesh, /debug/config_dump, /debug/edsz, ControlZ /envj/ and /argsj/) answer callers other than loopback.",
  },
  {
    name: "DISCOVERY_XDS_MAX_CONNECTIONS",
    type: "int",
    default: "20000",
    programs: DISCOVERY,
    description:
      "Not in the reference. Connections open at once over the xDS ports (15010 and 15012 together); more are closed on accept. A server is sized for 10,000 proxies of one connection each.",
  },
  {
    name: "DISCOVERY_XDS_MAX_CONNECTIONS_PER_PEER",
    type: "int",
    default: "256",
    programs: DISCOVERY,
    description:
      "Not in the reference. Connections open at once from one peer address over the xDS ports; more are closed on accept. Raise it where many proxies share an address (NAT, a load test on loopback).",
  },
  {
    name: "DISCOVERY_XDS_MAX_STREAMS",
    type: "int",
    default: "20000",
    programs: DISCOVERY,
    description:
      "Not in the reference. gRPC streams open at once over the xDS ports (ADS and CA calls); a new stream past it ends with RESOURCE_EXHAUSTED.",
  },
  {
    name: "DISCOVERY_XDS_MAX_STREAMS_PER_PEER",
    type: "int",
    default: "512",
    programs: DISCOVERY,
    description:
      "Not in the reference. gRPC streams open at once from one peer address over all its connections to the xDS ports; a new stream past it ends with RESOURCE_EXHAUSTED.",
  },
  {
    name: "DISCOVERY_XDS_CONNECTION_RATE_PER_PEER",
    type: "int",
    default: "256",
    programs: DISCOVERY,
    description:
      "Not in the reference. New connections one peer address may open a minute over the xDS ports, as many of them at once; more are closed on accept. Each connection the runtime served keeps memory after it closes (docs/deno_pin.md), so this bounds how fast one address can grow the server. Raise it with DISCOVERY_XDS_MAX_CONNECTIONS_PER_PEER where many proxies share an address.",
  },
];
