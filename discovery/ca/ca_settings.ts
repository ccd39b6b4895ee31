/**
 * The CA's settings, read once from the environment registry and flags.
 *
 * @module
 */
import type { EnvSettings } from "../../shared/env/env_settings.ts";
import type { CaSettings } from "./certificate_authority_server.ts";
import { DEFAULT_CSR_LIMITS } from "./ca_service.ts";

/** The CA settings from the environment; `trustDomain` from `--trust-domain`. */
export function caSettingsFromEnv(env: EnvSettings, trustDomain: string): CaSettings {
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
    rootCaDir: env.string("ROOT_CA_DIR"),
    trustDomain,
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
    audiences: env.string("TOKEN_AUDIENCES").split(",").map((a) => a.trim()).filter((a) => a !== ""),
    requireAudience: env.bool("REQUIRE_3P_TOKEN"),
    issuer: env.string("TOKEN_ISSUER"),
  };
}

/** DNS names of the secure port's serving certificate: the discovery service's names and `MESHD_CUSTOM_HOST`. */
export function securePortNames(namespace: string, domain: string, customHosts: string): string[] {
  return [
    `meshd.${namespace}.svc`,
    `meshd.${namespace}.svc.${domain}`,
    ...customHosts.split(",").map((h) => h.trim()).filter((h) => h !== ""),
    "localhost",
  ];
}
