/**
 * How `mesh-discovery` reaches the orchestrator's API: a kubeconfig named by `--orchconfig`, else the in-cluster
 * configuration (`ORCH_SERVICE_HOST`, port 443, the service account's token and CA at their usual mount paths).
 *
 * @module
 */
import { existsSync } from "node:fs";
import * as k8s from "@kubernetes/client-node";
import type { RateLimiter } from "./rate_limiter.ts";

/** The in-cluster service-account mount. */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/** The orchestrator's configuration is missing or unusable. */
export class OrchConfigError extends Error {
  /** `source` names the flag, file or variable at fault. */
  constructor(readonly source: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "OrchConfigError";
  }
}

/** Where the client configuration comes from. */
export interface OrchClientOptions {
  /** `--orchconfig`; empty for in-cluster configuration. */
  readonly orchConfig: string;
  /** `ORCH_SERVICE_HOST`, read when `orchConfig` is empty. */
  readonly serviceHost: string;
  /** Where the service account's token and CA are mounted in-cluster (default `SERVICE_ACCOUNT_DIR`). */
  readonly serviceAccountDir?: string;
}

/**
 * Loads the client configuration.
 *
 * @throws {OrchConfigError} naming the file or variable when neither is usable
 */
export function loadOrchConfig(options: OrchClientOptions): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  if (options.orchConfig !== "") {
    if (!existsSync(options.orchConfig)) {
      throw new OrchConfigError("--orchconfig", `--orchconfig ${options.orchConfig}: no such file`);
    }
    try {
      kc.loadFromFile(options.orchConfig);
    } catch (cause) {
      throw new OrchConfigError(
        "--orchconfig",
        `--orchconfig ${options.orchConfig}: not a usable kubeconfig (${(cause as Error).message})`,
        { cause },
      );
    }
    if (kc.getCurrentCluster() === null) {
      throw new OrchConfigError(
        "--orchconfig",
        `--orchconfig ${options.orchConfig}: its current context names no cluster; expected "current-context" ` +
          `naming a context whose cluster has a "server"`,
      );
    }
    return kc;
  }
  if (options.serviceHost === "") {
    throw new OrchConfigError(
      "ORCH_SERVICE_HOST",
      "No orchestrator configuration: give --orchconfig FILE, or run in-cluster where ORCH_SERVICE_HOST is set",
    );
  }
  const accountDir = options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  const token = `${accountDir}/token`;
  if (!existsSync(token)) {
    throw new OrchConfigError(
      token,
      `ORCH_SERVICE_HOST is set but ${token} does not exist: expected the service account's token mounted there`,
    );
  }
  kc.loadFromOptions({
    clusters: [{
      name: "in-cluster",
      server: `https://${
        options.serviceHost.includes(":") ? `[${options.serviceHost}]` : options.serviceHost
      }:443`,
      caFile: `${accountDir}/ca.crt`,
      skipTLSVerify: false,
    }],
    // A projected token rotates: the client reads the file again at most a minute after it was last read.
    users: [{ name: "in-cluster", authProvider: { name: "tokenFile", config: { tokenFile: token } } }],
    contexts: [{ name: "in-cluster", cluster: "in-cluster", user: "in-cluster" }],
    currentContext: "in-cluster",
  });
  return kc;
}

/**
 * Makes every watch request made with `kc` wait for a token of `limiter` (`--orchApiQPS`/`--orchApiBurst`), as
 * list calls already do: a watch that keeps dropping reconnects no faster than the limit. The client's watch
 * reads its request options from `applyToFetchOptions` right before connecting, so the wait goes there.
 */
export function limitWatches(kc: k8s.KubeConfig, limiter: RateLimiter): k8s.KubeConfig {
  const apply = kc.applyToFetchOptions.bind(kc);
  kc.applyToFetchOptions = async (options) => {
    await limiter.acquire();
    return await apply(options);
  };
  return kc;
}
