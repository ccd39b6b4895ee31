/**
 * The CA's settings, read once from the environment registry and flags.
 *
 * @module
 */
import type { EnvSettings } from "@mesh/shared/env/env_settings";
import { parseJwtPolicy } from "@mesh/shared/credentials/jwt_policy";
import { isDnsName } from "@mesh/shared/pki/subject_alt_names";
import type { CaSettings } from "./certificate_authority.ts";
import { DEFAULT_CSR_LIMITS } from "./ca_service.ts";

/** The CA's settings but its trust domain, which the mesh config may give after they are checked. */
export type CaEnvSettings = Omit<CaSettings, "trustDomain">;

/**
 * The CA settings from the environment, each checked: called before any port opens, so a bad value stops
 * startup with a message naming the variable.
 */
export function caSettingsFromEnv(env: EnvSettings): CaEnvSettings {
  const gracePercent = env.int("CASERVER_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE");
  if (gracePercent < 1 || gracePercent > 99) {
    throw new RangeError(
      `CASERVER_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE=${gracePercent}: expected a percentage from 1 to 99`,
    );
  }
  const checkIntervalMs = env.durationMs("CASERVER_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL");
  if (checkIntervalMs < 1000) {
    throw new RangeError(
      `CASERVER_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL=${checkIntervalMs}ms: expected at least 1s`,
    );
  }
  const rsaKeySize = env.int("CASERVER_SELF_SIGNED_CA_RSA_KEY_SIZE");
  if (![2048, 3072, 4096].includes(rsaKeySize)) {
    throw new RangeError(`CASERVER_SELF_SIGNED_CA_RSA_KEY_SIZE=${rsaKeySize}: expected 2048, 3072 or 4096`);
  }
  const defaultTtlMs = env.durationMs("DEFAULT_WORKLOAD_CERT_TTL");
  const maxTtlMs = env.durationMs("MAX_WORKLOAD_CERT_TTL");
  if (defaultTtlMs <= 0 || defaultTtlMs > maxTtlMs) {
    throw new RangeError(
      `DEFAULT_WORKLOAD_CERT_TTL=${
        defaultTtlMs / 1000
      }s: expected more than 0 and at most MAX_WORKLOAD_CERT_TTL ` +
        `(${maxTtlMs / 1000}s)`,
    );
  }
  return {
    rootCaDir: checkedRootCaDir(env),
    selfSignedTtlMs: env.durationMs("CASERVER_SELF_SIGNED_CA_CERT_TTL"),
    rsaKeySize,
    checkIntervalMs,
    jitter: env.bool("CASERVER_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR"),
    gracePercent,
    policy: { defaultTtlMs, maxTtlMs },
    // Their ranges are the registry's (shared/env/env_ranges.ts), checked before this runs.
    csrLimits: Object.freeze({
      ...DEFAULT_CSR_LIMITS,
      maxCsrBytes: env.int("CASERVER_CSR_MAX_BYTES"),
      rateQps: env.float("CASERVER_CSR_RATE_LIMIT_QPS"),
      rateBurst: env.int("CASERVER_CSR_RATE_LIMIT_BURST"),
      maxConcurrentSignings: env.int("CASERVER_MAX_CONCURRENT_SIGNINGS"),
      signingQueueSize: env.int("CASERVER_SIGNING_QUEUE_SIZE"),
    }),
    // AUDIENCE is the audience the reference's issuer-checked (out-of-cluster) tokens must carry; here that
    // check is the one JWT check, so it accepts it beside TOKEN_AUDIENCES.
    audiences: [
      ...env.string("TOKEN_AUDIENCES").split(",").map((a) => a.trim()).filter((a) => a !== ""),
      ...(env.string("AUDIENCE").trim() !== "" ? [env.string("AUDIENCE").trim()] : []),
    ],
    requireAudience: env.bool("REQUIRE_3P_TOKEN"),
    issuer: checkedIssuer(env.string("TOKEN_ISSUER")),
    jwtPolicy: parseJwtPolicy(env.string("JWT_POLICY")),
  };
}

/**
 * `ROOT_CA_DIR`: without the plugged-in CA's files the CA makes a self-signed root, as the reference does; but a
 * directory named in the environment that does not exist is a mistake (a wrong path, a missing mount), not a
 * request for a self-signed root.
 */
function checkedRootCaDir(env: EnvSettings): string {
  const dir = env.string("ROOT_CA_DIR");
  if (!env.isSet("ROOT_CA_DIR")) return dir;
  let isDirectory = false;
  try {
    isDirectory = Deno.statSync(dir).isDirectory;
  } catch (cause) {
    if (!(cause instanceof Deno.errors.NotFound)) {
      throw new RangeError(`ROOT_CA_DIR="${dir}" cannot be read: ${(cause as Error).message}`, { cause });
    }
  }
  if (!isDirectory) {
    throw new RangeError(
      `ROOT_CA_DIR="${dir}" is not a directory: expected the plugged-in CA's directory (ca-cert.pem, ` +
        "ca-key.pem, cert-chain.pem, root-cert.pem), or ROOT_CA_DIR unset for a self-signed root",
    );
  }
  return dir;
}

/** `TOKEN_ISSUER`: empty, or the OIDC issuer's URL, which tokens carry as `iss` and its keys are found under. */
function checkedIssuer(issuer: string): string {
  if (issuer === "") return issuer;
  const url = URL.parse(issuer);
  if (url === null || (url.protocol !== "https:" && url.protocol !== "http:") || url.hostname === "") {
    throw new RangeError(
      `TOKEN_ISSUER="${issuer}" is not an issuer URL: expected an http(s) URL such as ` +
        '"https://issuer.example.com", or empty',
    );
  }
  return issuer;
}

/** DNS names of the secure port's serving certificate: the discovery service's names and `MESHD_CUSTOM_HOST`. */
export function securePortNames(namespace: string, domain: string, customHosts: string): string[] {
  const custom = customHosts.split(",").map((h) => h.trim()).filter((h) => h !== "");
  const bad = custom.find((host) => !isDnsName(host));
  if (bad !== undefined) {
    throw new RangeError(`Invalid MESHD_CUSTOM_HOST host "${bad}": expected DNS names separated by commas`);
  }
  return [`meshd.${namespace}.svc`, `meshd.${namespace}.svc.${domain}`, ...custom, "localhost"];
}
