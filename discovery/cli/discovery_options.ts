import { checkFlagRanges } from "./flag_ranges.ts";
import type { FlagValue } from "@mesh/shared/cli/flag_spec";
import type { EnvSettings } from "@mesh/shared/env/env_settings";
import { type ListenAddress, parseListenAddress } from "@mesh/shared/http/listen_address";
import { checkTrustDomain } from "@mesh/shared/config/mesh/mesh_config_schema";
import { isDnsName } from "@mesh/shared/pki/subject_alt_names";
import { isLowercaseDnsLabel } from "@mesh/shared/config/validation/labels";

/** Every setting of `mesh-discovery discovery`, parsed once at startup and frozen. */
export interface DiscoveryOptions {
  /** `--appNamespace` split on commas: namespaces the controller manages; empty means all. */
  readonly appNamespaces: readonly string[];
  /** `--caCertFile`: file with the x509 server CA certificate; empty means none. */
  readonly caCertFile: string;
  /** `--clusterID` when given, else `CLUSTER_ID`: the cluster this instance runs in. */
  readonly clusterId: string;
  /**
   * `--configDir`: directory of YAML config files; when set it replaces the orchestrator's resource client.
   */
  readonly configDir: string;
  /** `--domain`: DNS domain suffix (default `cluster.local`). */
  readonly domain: string;
  /** `--grpcAddr`: the plaintext discovery gRPC (xDS) listener. */
  readonly grpcAddr: ListenAddress;
  /** `--secureGRPCAddr`: the TLS discovery gRPC listener. */
  readonly secureGrpcAddr: ListenAddress;
  /** `--httpAddr`: the discovery HTTP listener (readiness, debug). */
  readonly httpAddr: ListenAddress;
  /** `--httpsAddr`: the HTTPS listener for the injection and validation webhooks. */
  readonly httpsAddr: ListenAddress;
  /** `--monitoringAddr`: the self-monitoring (metrics) HTTP listener. */
  readonly monitoringAddr: ListenAddress;
  /** `--ctrlz_address` and `--ctrlz_port`: the introspection listener; `*` becomes `0.0.0.0`. */
  readonly ctrlzAddr: ListenAddress;
  /** `--orchconfig`: orchestrator configuration file used instead of in-cluster configuration. */
  readonly orchConfig: string;
  /** `--orchApiBurst`: maximum burst of calls to the orchestrator API. */
  readonly orchApiBurst: number;
  /** `--clusterRegistriesNamespace`: where remote clusters' Secrets are read; empty: none are. */
  readonly clusterRegistriesNamespace: string;
  /** `--orchApiQPS`: maximum queries per second to the orchestrator API. */
  readonly orchApiQps: number;
  /** `--meshConfig`: path of the mesh config file. */
  readonly meshConfigFile: string;
  /** `--networksConfig`: path of the mesh networks file. */
  readonly networksConfigFile: string;
  /**
   * `--namespace` when given, else `POD_NAMESPACE`, else its default `mesh-system`: where the controller
   * runs.
   */
  readonly namespace: string;
  /** `--profile`: serve profiling at `/debug/pprof`. */
  readonly profile: boolean;
  /** `--registries`: service registries to read; each is `Orchestrator` or `Mock`. */
  readonly registries: readonly string[];
  /** `--plugins`: the networking plugins whose filters generated listeners carry. */
  readonly plugins: ReadonlySet<NetworkingPlugin>;
  /** `--resync`: controller resync interval, in milliseconds. */
  readonly resyncMs: number;
  /** `--tlsCertFile`: file with the x509 server certificate. */
  readonly tlsCertFile: string;
  /** `--tlsKeyFile`: file with the private key matching `tlsCertFile`. */
  readonly tlsKeyFile: string;
  /** `--trust-domain`: domain identifying the system in SPIFFE identities. */
  readonly trustDomain: string;
  /**
   * gRPC keepalive: ping interval and ping timeout in milliseconds, maximum connection age in nanoseconds.
   */
  readonly keepalive: {
    readonly intervalMs: number;
    readonly timeoutMs: number;
    readonly maxConnectionAgeNs: bigint;
  };
  /** The environment settings registry, read once at startup. */
  readonly env: EnvSettings;
}

const KNOWN_REGISTRIES = ["Orchestrator", "Mock"];

/**
 * The networking plugins `--plugins` may name. `authn` gives sidecars inbound mesh mTLS (by PeerAuthentication)
 * and JWT checks, `authz` RBAC from AuthorizationPolicies, `metadata_exchange` the peer metadata exchange filters;
 * `ext_authz` and `health` are the reference's names with no filters of their own here (CUSTOM policies are
 * denied by `authz` as no external authorizer runs; the reference has no health plugin any more).
 */
export const NETWORKING_PLUGINS = ["authn", "authz", "ext_authz", "health", "metadata_exchange"] as const;
/** One networking plugin. */
export type NetworkingPlugin = typeof NETWORKING_PLUGINS[number];

/** Builds DiscoveryOptions from parsed flags and the env registry; throws RangeError naming a bad flag. */
export function discoveryOptions(
  flags: Readonly<Record<string, FlagValue>>,
  explicit: ReadonlySet<string>,
  env: EnvSettings,
): DiscoveryOptions {
  checkFlagRanges(flags);
  const registries = flags.registries as string[];
  for (const r of registries) {
    if (!KNOWN_REGISTRIES.includes(r)) {
      throw new RangeError(
        `Invalid --registries "${
          registries.join(",")
        }": unknown registry "${r}"; expected Orchestrator or Mock`,
      );
    }
  }
  const plugins = flags.plugins as string[];
  for (const p of plugins) {
    if (!(NETWORKING_PLUGINS as readonly string[]).includes(p)) {
      throw new RangeError(
        `Invalid --plugins "${plugins.join(",")}": unknown plugin "${p}"; expected some of ${
          NETWORKING_PLUGINS.join(", ")
        }`,
      );
    }
  }
  const ctrlzHost = flags.ctrlz_address as string;
  const clusterId = explicit.has("clusterID") ? flags.clusterID as string : env.string("CLUSTER_ID");
  const namespace = explicit.has("namespace")
    ? flags.namespace as string
    : env.string("POD_NAMESPACE") || flags.namespace as string;
  checkNames(flags.domain as string, flags["trust-domain"] as string, namespace);
  const registriesNamespace = flags.clusterRegistriesNamespace as string;
  if (registriesNamespace !== "" && !isLowercaseDnsLabel(registriesNamespace)) {
    throw new RangeError(
      `Invalid --clusterRegistriesNamespace "${registriesNamespace}": expected a namespace name of lower-case ` +
        'letters, digits and "-", such as "mesh-system", or empty to read no remote clusters',
    );
  }
  return Object.freeze({
    appNamespaces: (flags.appNamespace as string).split(",").map((s) => s.trim()).filter((s) => s !== ""),
    caCertFile: flags.caCertFile as string,
    clusterId,
    configDir: flags.configDir as string,
    domain: flags.domain as string,
    grpcAddr: parseListenAddress(flags.grpcAddr as string, "--grpcAddr"),
    secureGrpcAddr: parseListenAddress(flags.secureGRPCAddr as string, "--secureGRPCAddr"),
    httpAddr: parseListenAddress(flags.httpAddr as string, "--httpAddr"),
    httpsAddr: parseListenAddress(flags.httpsAddr as string, "--httpsAddr"),
    monitoringAddr: parseListenAddress(flags.monitoringAddr as string, "--monitoringAddr"),
    ctrlzAddr: { hostname: ctrlzHost === "*" ? "0.0.0.0" : ctrlzHost, port: flags.ctrlz_port as number },
    orchConfig: flags.orchconfig as string,
    orchApiBurst: flags.orchApiBurst as number,
    clusterRegistriesNamespace: flags.clusterRegistriesNamespace as string,
    orchApiQps: flags.orchApiQPS as number,
    meshConfigFile: flags.meshConfig as string,
    networksConfigFile: flags.networksConfig as string,
    namespace,
    profile: flags.profile as boolean,
    registries,
    plugins: new Set(plugins as NetworkingPlugin[]),
    resyncMs: Number((flags.resync as bigint) / 1_000_000n),
    tlsCertFile: flags.tlsCertFile as string,
    tlsKeyFile: flags.tlsKeyFile as string,
    trustDomain: flags["trust-domain"] as string,
    keepalive: Object.freeze({
      intervalMs: Number((flags.keepaliveInterval as bigint) / 1_000_000n),
      timeoutMs: Number((flags.keepaliveTimeout as bigint) / 1_000_000n),
      maxConnectionAgeNs: flags.keepaliveMaxServerConnectionAge as bigint,
    }),
    env,
  });
}

/**
 * The domain ends every service's host name, the trust domain every identity, and the namespace names the
 * discovery service in its serving certificates: each is checked up front.
 */
function checkNames(domain: string, trustDomain: string, namespace: string): void {
  if (!isLowercaseDnsLabel(namespace)) {
    throw new RangeError(
      `Invalid --namespace (or POD_NAMESPACE) "${namespace}": expected a namespace name of lower-case ` +
        'letters, digits and "-", such as "mesh-system"',
    );
  }
  if (!isDnsName(domain) || domain.startsWith("*.")) {
    throw new RangeError(
      `Invalid --domain "${domain}": expected a DNS domain suffix such as "cluster.local"`,
    );
  }
  const problem = trustDomain === "" ? undefined : checkTrustDomain(trustDomain);
  if (problem !== undefined) {
    throw new RangeError(
      `Invalid --trust-domain "${trustDomain}": expected DNS labels joined by dots such as "cluster.local", ` +
        "or empty for the mesh config's trustDomain",
    );
  }
}
