import type { FlagSpec } from "@mesh/shared/cli/flag_spec";
import { TOKEN_MANAGER_PLUGINS } from "../sts/token_manager_plugins.ts";

/** Log scopes of the agent (mesh-agent.md 4.2). */
export const AGENT_SCOPES: readonly string[] = Object.freeze([
  "ads",
  "adsc",
  "all",
  "authn",
  "authorization",
  "cache",
  "caclient",
  "default",
  "dns",
  "cloudcred",
  "cloudca",
  "healthcheck",
  "orchlog",
  "mockcred",
  "model",
  "sds",
  "secretfetcher",
  "spiffe",
  "stsclient",
  "stsserver",
  "token",
  "validation",
  "validationController",
  "xdsproxy",
]);

/** Flags of `mesh-agent proxy` (4.5). */
export const PROXY_FLAGS: readonly FlagSpec[] = Object.freeze(
  [
    { name: "concurrency", type: "int", default: 0, help: "number of worker threads to run" },
    {
      name: "domain",
      type: "string",
      default: "",
      help: "DNS domain suffix. If not provided uses ${POD_NAMESPACE}.svc.cluster.local",
    },
    {
      name: "meshConfig",
      type: "string",
      default: "./etc/mesh/config/mesh",
      help:
        "File name for mesh configuration. If not specified, a default mesh will be used. This may be overridden by PROXY_CONFIG environment variable or proxy.mesh.io/config annotation.",
    },
    { name: "outlierLogPath", type: "string", default: "", help: "The log path for outlier detection" },
    {
      name: "proxyComponentLogLevel",
      type: "string",
      default: "misc:error",
      help: "The component log level used to start the proxy",
    },
    {
      name: "proxyLogLevel",
      type: "string",
      default: "warning",
      help:
        "The log level used to start the proxy (choose from {trace, debug, info, warning, error, critical, off})",
    },
    { name: "serviceCluster", type: "string", default: "mesh-proxy", help: "Service cluster" },
    {
      name: "stsPort",
      type: "int",
      default: 0,
      help:
        "HTTP Port on which to serve Security Token Service (STS). If zero, STS service will not be provided. " +
        "Served on loopback: RFC 8693 token exchange at POST /token, held tokens at /stsStatus.",
    },
    { name: "templateFile", type: "string", default: "", help: "Go template bootstrap config" },
    {
      name: "tokenManagerPlugin",
      type: "string",
      default: "CloudTokenExchange",
      help: "Token provider specific plugin name, used with --stsPort. " +
        Object.entries(TOKEN_MANAGER_PLUGINS).map(([name, spec]) => `${name}: ${spec.needs}.`).join(" "),
    },
  ] satisfies FlagSpec[],
);

/** Flags of `mesh-agent wait` (4.7). */
export const WAIT_FLAGS: readonly FlagSpec[] = Object.freeze(
  [
    {
      name: "periodMillis",
      type: "int",
      default: 500,
      help: "number of milliseconds to wait between attempts",
    },
    {
      name: "requestTimeoutMillis",
      type: "int",
      default: 500,
      help: "number of milliseconds to wait for response",
    },
    {
      name: "timeoutSeconds",
      type: "int",
      default: 60,
      help: "maximum number of seconds to wait for the proxy to be ready",
    },
    {
      name: "url",
      type: "string",
      default: "http://localhost:15021/healthz/ready",
      help: "URL to use in requests",
    },
  ] satisfies FlagSpec[],
);

const DRY_RUN: FlagSpec = {
  name: "dry-run",
  short: "n",
  type: "bool",
  default: false,
  help: "Do not call any external dependencies like iptables",
};

/** Flags of `mesh-agent mesh-clean-iptables` (4.3). */
export const CLEAN_IPTABLES_FLAGS: readonly FlagSpec[] = Object.freeze([DRY_RUN]);

/** Flags of `mesh-agent mesh-iptables` (4.4); empty strings fall back to environment variables. */
export const IPTABLES_FLAGS: readonly FlagSpec[] = Object.freeze(
  [
    DRY_RUN,
    {
      name: "envoy-port",
      short: "p",
      type: "string",
      default: "",
      help: "Specify the envoy port to which redirect all TCP traffic (default $PROXY_PORT = 15001)",
    },
    {
      name: "inbound-capture-port",
      short: "z",
      type: "string",
      default: "",
      help:
        "Port to which all inbound TCP traffic to the pod/VM should be redirected to (default $INBOUND_CAPTURE_PORT = 15006)",
    },
    {
      name: "inbound-tunnel-port",
      short: "e",
      type: "string",
      default: "",
      help: "Specify the mesh tunnel port for inbound tcp traffic (default $INBOUND_TUNNEL_PORT = 15008)",
    },
    {
      name: "iptables-probe-port",
      type: "string",
      default: "15002",
      help: "set listen port for failure detection",
    },
    {
      name: "mesh-inbound-interception-mode",
      short: "m",
      type: "string",
      default: "",
      help: 'The mode used to redirect inbound connections to Envoy, either "REDIRECT" or "TPROXY"',
    },
    {
      name: "mesh-inbound-ports",
      short: "b",
      type: "string",
      default: "",
      help:
        'Comma separated list of inbound ports for which traffic is to be redirected to Envoy (optional). The wildcard character "*" can be used to configure redirection for all ports. An empty list will disable',
    },
    { name: "mesh-inbound-tproxy-mark", short: "t", type: "string", default: "", help: "" },
    { name: "mesh-inbound-tproxy-route-table", short: "r", type: "string", default: "", help: "" },
    {
      name: "mesh-local-exclude-ports",
      short: "d",
      type: "string",
      default: "",
      help:
        'Comma separated list of inbound ports to be excluded from redirection to Envoy (optional). Only applies when all inbound traffic (i.e. "*") is being redirected (default to $MESH_LOCAL_EXCLUDE_PORTS)',
    },
    {
      name: "mesh-local-outbound-ports-exclude",
      short: "o",
      type: "string",
      default: "",
      help: "Comma separated list of outbound ports to be excluded from redirection to Envoy",
    },
    {
      name: "mesh-outbound-ports",
      short: "q",
      type: "string",
      default: "",
      help: "Comma separated list of outbound ports to be explicitly included for redirection to Envoy",
    },
    {
      name: "mesh-service-cidr",
      short: "i",
      type: "string",
      default: "",
      help:
        'Comma separated list of IP ranges in CIDR form to redirect to envoy (optional). The wildcard character "*" can be used to redirect all outbound traffic. An empty list will disable all outbound redirection to Envoy',
    },
    {
      name: "mesh-service-exclude-cidr",
      short: "x",
      type: "string",
      default: "",
      help:
        'Comma separated list of IP ranges in CIDR form to be excluded from redirection. Only applies when all  outbound traffic (i.e. "*") is being redirected (default to $MESH_SERVICE_EXCLUDE_CIDR)',
    },
    {
      name: "orch-virt-interfaces",
      short: "k",
      type: "string",
      default: "",
      help:
        "Comma separated list of virtual interfaces whose inbound traffic (from VM) will be treated as outbound",
    },
    { name: "probe-timeout", type: "duration", default: 5_000_000_000n, help: "failure detection timeout" },
    {
      name: "proxy-gid",
      short: "g",
      type: "string",
      default: "",
      help:
        "Specify the GID of the user for which the redirection is not applied. (same default value as -u param)",
    },
    {
      name: "proxy-uid",
      short: "u",
      type: "string",
      default: "",
      help:
        "Specify the UID of the user for which the redirection is not applied. Typically, this is the UID of the proxy container",
    },
    {
      name: "restore-format",
      short: "f",
      type: "bool",
      default: false,
      help: "Print iptables rules in iptables-restore interpretable format",
    },
    { name: "run-validation", type: "bool", default: false, help: "Validate iptables" },
    { name: "skip-rule-apply", type: "bool", default: false, help: "Skip iptables apply" },
  ] satisfies FlagSpec[],
);
