import type { FlagValue } from "../../shared/cli/flag_spec.ts";
import type { EnvSettings } from "../../shared/env/env_settings.ts";
import { type ListenAddress, parseListenAddress } from "../../shared/http/listen_address.ts";

/** Every setting of `mesh-discovery discovery`, parsed once at startup and frozen. */
export interface DiscoveryOptions {
  readonly appNamespaces: readonly string[];
  readonly caCertFile: string;
  readonly clusterId: string;
  readonly clusterRegistriesNamespace: string;
  readonly configDir: string;
  readonly domain: string;
  readonly grpcAddr: ListenAddress;
  readonly secureGrpcAddr: ListenAddress;
  readonly httpAddr: ListenAddress;
  readonly httpsAddr: ListenAddress;
  readonly monitoringAddr: ListenAddress;
  readonly ctrlzAddr: ListenAddress;
  readonly orchConfig: string;
  readonly orchApiBurst: number;
  readonly orchApiQps: number;
  readonly meshConfigFile: string;
  readonly networksConfigFile: string;
  readonly namespace: string;
  readonly plugins: readonly string[];
  readonly profile: boolean;
  readonly registries: readonly string[];
  readonly resyncMs: number;
  readonly tlsCertFile: string;
  readonly tlsKeyFile: string;
  readonly trustDomain: string;
  readonly keepalive: {
    readonly intervalMs: number;
    readonly timeoutMs: number;
    readonly maxConnectionAgeNs: bigint;
  };
  readonly env: EnvSettings;
}

const KNOWN_REGISTRIES = ["Orchestrator", "Mock"];

/** Builds DiscoveryOptions from parsed flags and the env registry; throws RangeError naming a bad flag. */
export function discoveryOptions(
  flags: Readonly<Record<string, FlagValue>>,
  explicit: ReadonlySet<string>,
  env: EnvSettings,
): DiscoveryOptions {
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
  const ctrlzHost = flags.ctrlz_address as string;
  const clusterId = explicit.has("clusterID") ? flags.clusterID as string : env.string("CLUSTER_ID");
  return Object.freeze({
    appNamespaces: (flags.appNamespace as string).split(",").map((s) => s.trim()).filter((s) => s !== ""),
    caCertFile: flags.caCertFile as string,
    clusterId,
    clusterRegistriesNamespace: flags.clusterRegistriesNamespace as string,
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
    orchApiQps: flags.orchApiQPS as number,
    meshConfigFile: flags.meshConfig as string,
    networksConfigFile: flags.networksConfig as string,
    namespace: explicit.has("namespace")
      ? flags.namespace as string
      : env.string("POD_NAMESPACE") || flags.namespace as string,
    plugins: flags.plugins as string[],
    profile: flags.profile as boolean,
    registries,
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
