/**
 * Where the workload certificate comes from, chosen and checked at startup: files mounted at `./etc/certs` with
 * `FILE_MOUNTED_CERTS`, else the CA at `CA_ADDR` (default: the discovery address) through `CA_PROVIDER`'s
 * service, authenticated by the workload token `JWT_POLICY` names or, with `PROV_CERT`, a provisioned certificate.
 *
 * @module
 */
import type { EnvSettings } from "@mesh/shared/env/env_settings";
import type { LogManager } from "@mesh/shared/log/log_manager";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import { spiffeId, validateTrustDomain } from "@mesh/shared/pki/spiffe_id";
import { parseJwtPolicy, tokenPathOf } from "@mesh/shared/credentials/jwt_policy";
import { CaClient } from "./ca_client.ts";
import { caServiceFor } from "./ca_provider.ts";
import { checkCredentialFetcherType } from "./credential_fetcher.ts";
import { readIfExists } from "./read_if_exists.ts";
import { caRootPath, rootSettings } from "./cert_provider_roots.ts";
import { MountedSecrets } from "./secret_files.ts";
import { type SecretProvider, WorkloadSecrets } from "./workload_secrets.ts";

/** The mesh root, where injection mounts it (the token's path is `JWT_POLICY`'s). */
export const WORKLOAD_PATHS = Object.freeze({
  root: "./var/run/secrets/mesh/root-cert.pem",
});

/** Where `FILE_MOUNTED_CERTS` expects the workload's key material, as Istio mounts it. */
const MOUNTED_CERTS_DIR = "./etc/certs";

/** The discovery server's certificate names its service, not an IP it is reached at. */
export function discoveryServerName(address: string): string {
  const host = address.slice(0, address.lastIndexOf(":")).replace(/^\[|\]$/g, "");
  return /^[0-9.:]+$/.test(host) ? "meshd.mesh-system.svc" : host;
}

/** The CA settings, checked before anything is served. */
export interface CaChoice {
  /** `CA_PROVIDER`'s gRPC service. */
  readonly service: string;
  /** The CSR's SPIFFE id (`TRUST_DOMAIN`, `POD_NAMESPACE`, `SERVICE_ACCOUNT`); absent without an account. */
  readonly csrUri?: string;
  /** The workload token's file, as `JWT_POLICY` names it. */
  readonly tokenPath: string;
}

/**
 * `CA_PROVIDER`, `CREDENTIAL_FETCHER_TYPE`, `TRUST_DOMAIN` and `SERVICE_ACCOUNT`, checked.
 *
 * @throws {RangeError} naming the variable whose value is refused
 */
export function checkedCaChoice(env: EnvSettings, namespace: string): CaChoice {
  const service = caServiceFor(env.string("CA_PROVIDER"));
  checkCredentialFetcherType(env.string("CREDENTIAL_FETCHER_TYPE"));
  const tokenPath = tokenPathOf(parseJwtPolicy(env.string("JWT_POLICY")));
  const trustDomain = env.string("TRUST_DOMAIN");
  try {
    validateTrustDomain(trustDomain);
  } catch (cause) {
    throw new RangeError(`TRUST_DOMAIN="${trustDomain}": ${(cause as Error).message}`, { cause });
  }
  const account = env.string("SERVICE_ACCOUNT");
  if (account === "") return { service, tokenPath };
  try {
    return { service, tokenPath, csrUri: spiffeId(trustDomain, namespace, account) };
  } catch (cause) {
    throw new RangeError(`SERVICE_ACCOUNT="${account}": ${(cause as Error).message}`, { cause });
  }
}

/** Starts the workload secret's source; its first secret is read (mounted) or being requested (CA). */
export async function startWorkloadSecrets(
  env: EnvSettings,
  discoveryAddress: string,
  caChoice: CaChoice,
  logs: LogManager,
  metrics: Metrics,
): Promise<{ provider: SecretProvider; close(): void }> {
  const checkIntervalMs = env.durationMs("SECRET_ROTATION_CHECK_INTERVAL");
  if (env.bool("FILE_MOUNTED_CERTS")) {
    const mounted = new MountedSecrets({
      dir: MOUNTED_CERTS_DIR,
      checkIntervalMs,
      log: logs.scope("caclient"),
    });
    // The first read must work: an agent without a certificate cannot serve its proxy.
    await mounted.load();
    mounted.start();
    return { provider: mounted, close: () => mounted.close() };
  }
  const roots = rootSettings(env);
  const rootPath = caRootPath(roots, WORKLOAD_PATHS.root);
  const rootPem = readIfExists(rootPath);
  if (rootPem === undefined) {
    throw new Error(
      `No CA root at ${rootPath}: mount the roots there or set CA_ROOT_CA to their file ` +
        `(DISCOVERY_CERT_PROVIDER="${env.string("DISCOVERY_CERT_PROVIDER")}")`,
    );
  }
  // The roots workloads trust: the CA connection's, unless DISCOVERY_CERT_PROVIDER points that at the
  // discovery server's signer; then the mounted mesh roots, else the root the CA's chains end in.
  const meshRootPem = rootPath === (roots.caRootCa || WORKLOAD_PATHS.root)
    ? rootPem
    : readIfExists(WORKLOAD_PATHS.root);
  const caAddress = env.string("CA_ADDR") || discoveryAddress;
  const ca = new CaClient({
    address: caAddress,
    rootPem,
    serverName: discoveryServerName(caAddress),
    token: () => Promise.resolve(readIfExists(caChoice.tokenPath)?.trim()),
    metrics,
    service: caChoice.service,
    provisionedDir: env.string("PROV_CERT"),
    tokenWithCert: env.bool("USE_TOKEN_FOR_CSR"),
    log: logs.scope("caclient"),
  });
  const secrets = new WorkloadSecrets({
    signer: ca,
    ttlSeconds: env.durationMs("SECRET_TTL") / 1000,
    graceRatio: env.float("SECRET_GRACE_PERIOD_RATIO"),
    checkIntervalMs,
    ecdsa: env.string("ECC_SIGNATURE_ALGORITHM") === "ECDSA",
    pkcs8: env.bool("PKCS8_KEY"),
    ...(meshRootPem === undefined ? {} : { rootPem: meshRootPem }),
    initialBackoffMs: env.int("INITIAL_BACKOFF_MSEC"),
    ...(caChoice.csrUri !== undefined ? { csrUri: caChoice.csrUri } : {}),
    log: logs.scope("caclient"),
  });
  secrets.start();
  return {
    provider: secrets,
    close: () => {
      secrets.close();
      ca.close();
    },
  };
}
