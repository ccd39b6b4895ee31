import type { EnvVarSpec, Program } from "./env_vars.ts";

const DISCOVERY: readonly Program[] = ["discovery"];

/** Variables only the discovery program reads (mesh-discovery.md 4.5). */
export const DISCOVERY_ENV_VARS: readonly EnvVarSpec[] = [
  {
    name: "MESHD_GATEWAY_CREDENTIALS_DIR",
    type: "string",
    default: "",
    programs: DISCOVERY,
    description:
      "Not in the reference. A directory of gateway credentials, <dir>/<namespace>/<credentialName>/ holding tls.crt, tls.key and optionally ca.crt, served over SDS beside the orchestrator's Secrets; empty: none.",
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
    name: "DEBUG_REMOTE_ACCESS",
    type: "bool",
    default: "false",
    programs: DISCOVERY,
    description:
      "When true, debug paths that reveal the environment or the full config (/debug/configz, /debug/env, /debug/mesh, /debug/config_dump, /debug/edsz, ControlZ /envj/ and /argsj/) answer callers other than loopback.",
  },
];
