import type { FlagSpec } from "@mesh/shared/cli/flag_spec";
import { MAX_DURATION_NS } from "@mesh/shared/flags/duration";

/** Log scopes of the discovery program (mesh-discovery.md 4.2.1). */
export const DISCOVERY_SCOPES: readonly string[] = Object.freeze([
  "ads",
  "adsc",
  "all",
  "analysis",
  "authn",
  "authorization",
  "cache",
  "default",
  "orchlog",
  "orch",
  "mcp",
  "model",
  "pkica",
  "processing",
  "resource",
  "rootcertrotator",
  "secretcontroller",
  "secretfetcher",
  "serverca",
  "source",
  "spiffe",
  "status",
  "validation",
  "validationController",
  "validationServer",
]);

const SECOND = 1_000_000_000n;

/** Introspection and keepalive flags that every discovery subcommand accepts besides the logging flags (4.2). */
export const DISCOVERY_COMMON_FLAGS: readonly FlagSpec[] = Object.freeze(
  [
    {
      name: "ctrlz_address",
      type: "string",
      default: "localhost",
      help:
        "The IP Address to listen on for the ControlZ introspection facility. Use '*' to indicate all addresses.",
    },
    {
      name: "ctrlz_port",
      type: "uint16",
      default: 9876,
      help: "The IP port to use for the ControlZ introspection facility",
    },
    {
      name: "keepaliveInterval",
      type: "duration",
      default: 30n * SECOND,
      help:
        "The time interval if no activity on the connection it pings the peer to see if the transport is alive",
    },
    {
      name: "keepaliveMaxServerConnectionAge",
      type: "duration",
      default: MAX_DURATION_NS,
      help: "Maximum duration a connection will be kept open on the server side before a graceful close.",
    },
    {
      name: "keepaliveTimeout",
      type: "duration",
      default: 10n * SECOND,
      help:
        "After having pinged for keepalive check, the client/server waits for a duration of keepaliveTimeout and if no activity is seen even after that the connection is closed.",
    },
  ] satisfies FlagSpec[],
);

/** Flags of `mesh-discovery discovery` (4.3). */
export const DISCOVERY_FLAGS: readonly FlagSpec[] = Object.freeze(
  [
    {
      name: "appNamespace",
      short: "a",
      type: "string",
      default: "",
      help:
        "Comma-separated list of application namespaces the controller manages; when empty, all namespaces are watched",
    },
    {
      name: "caCertFile",
      type: "string",
      default: "",
      help: "File containing the x509 Server CA Certificate",
    },
    {
      name: "clusterID",
      type: "string",
      default: "Orchestrator",
      help: "The ID of the cluster that this instance resides",
    },
    {
      name: "clusterRegistriesNamespace",
      type: "string",
      default: "mesh-system",
      help: "Namespace for ConfigMap which stores clusters configs",
    },
    {
      name: "configDir",
      type: "string",
      default: "",
      help:
        "Directory to watch for updates to config yaml files. If specified, the files will be used as the source of config, rather than the orchestrator's resource client.",
    },
    { name: "domain", type: "string", default: "cluster.local", help: "DNS domain suffix" },
    { name: "grpcAddr", type: "string", default: ":15010", help: "Discovery service gRPC address" },
    { name: "httpAddr", type: "string", default: ":8080", help: "Discovery service HTTP address" },
    {
      name: "httpsAddr",
      type: "string",
      default: ":15017",
      help: "Injection and validation service HTTPS address",
    },
    {
      name: "orchconfig",
      type: "string",
      default: "",
      help: "Use an orchestrator configuration file instead of in-cluster configuration",
    },
    {
      name: "orchApiBurst",
      type: "int",
      default: 40,
      help: "Maximum burst for throttle when communicating with the orchestrator API; must be >= orchApiQPS",
    },
    {
      name: "orchApiQPS",
      type: "float32",
      default: 20,
      help: "Maximum QPS when communicating with the orchestrator API",
    },
    {
      name: "mcpInitialConnWindowSize",
      type: "int",
      default: 1048576,
      help: "Initial connection window size for MCP's gRPC connection",
    },
    {
      name: "mcpInitialWindowSize",
      type: "int",
      default: 1048576,
      help: "Initial window size for MCP's gRPC connection",
    },
    {
      name: "mcpMaxMsgSize",
      type: "int",
      default: 4194304,
      help: "Max message size received by MCP's grpc client",
    },
    {
      name: "meshConfig",
      type: "string",
      default: "./etc/mesh/config/mesh",
      help: "File name for mesh configuration. If not specified, a default mesh will be used.",
    },
    {
      name: "monitoringAddr",
      type: "string",
      default: ":15014",
      help: "HTTP address to use for discovery's self-monitoring information",
    },
    {
      name: "namespace",
      short: "n",
      type: "string",
      default: "mesh-system",
      help:
        "Select a namespace where the controller resides. If not set, uses ${POD_NAMESPACE} environment variable",
    },
    {
      name: "networksConfig",
      type: "string",
      default: "/etc/mesh/config/meshNetworks",
      help:
        "File name for mesh networks configuration. If not specified, a default mesh networks will be used.",
    },
    {
      name: "plugins",
      type: "stringSlice",
      default: ["authn", "authz", "health"],
      help: "comma separated list of networking plugins to enable",
    },
    {
      name: "profile",
      type: "bool",
      default: false,
      help: "Enable profiling via web interface host:port/debug/pprof",
    },
    {
      name: "registries",
      type: "stringSlice",
      default: ["Orchestrator"],
      help:
        "Comma separated list of platform service registries to read from (choose one or more from {Orchestrator, Mock})",
    },
    { name: "resync", type: "duration", default: 60n * SECOND, help: "Controller resync interval" },
    {
      name: "secureGRPCAddr",
      type: "string",
      default: ":15012",
      help: "Discovery service secured gRPC address",
    },
    {
      name: "tlsCertFile",
      type: "string",
      default: "",
      help: "File containing the x509 Certificate for HTTPS.",
    },
    {
      name: "tlsKeyFile",
      type: "string",
      default: "",
      help: "File containing the x509 private key matching --tlsCertFile",
    },
    {
      name: "trust-domain",
      type: "string",
      default: "",
      help: "The domain serves to identify the system with spiffe",
    },
  ] satisfies FlagSpec[],
);
