/**
 * `--tokenManagerPlugin`: the plugins the STS server can hand token exchanges to, what each needs, and the
 * check of those needs before anything listens. The flag's help lists them from here.
 *
 * @module
 */
import type { EnvSettings } from "@mesh/shared/env/env_settings";
import type { Logger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import { CloudTokenExchange } from "./cloud_token_exchange.ts";
import type { TokenExchangePlugin } from "./token_exchange.ts";

/** What a plugin is built from. */
export interface PluginContext {
  readonly env: EnvSettings;
  readonly metrics: Metrics;
  readonly log: Logger;
}

/** One plugin: what it needs (for `--help`) and how it is made. */
export interface TokenManagerPluginSpec {
  /** What it does and which settings it needs, one sentence. */
  readonly needs: string;
  /**
   * Builds the plugin from the settings.
   *
   * @throws {RangeError} naming the setting that is missing or wrong
   */
  create(context: PluginContext): TokenExchangePlugin;
}

/** The project number of `CLOUD_METADATA` (`PROJECT_ID|PROJECT_NUMBER|CLUSTER_NAME|CLUSTER_ZONE`). */
function projectNumber(env: EnvSettings): string {
  const number = env.string("CLOUD_METADATA").split("|")[1]?.trim() ?? "";
  if (!/^\d+$/.test(number)) {
    throw new RangeError(
      "--tokenManagerPlugin=CloudTokenExchange needs the project number: set CLOUD_METADATA to " +
        '"PROJECT_ID|PROJECT_NUMBER|CLUSTER_NAME|CLUSTER_ZONE" with a numeric PROJECT_NUMBER',
    );
  }
  return number;
}

/** Every plugin, by its `--tokenManagerPlugin` name. */
export const TOKEN_MANAGER_PLUGINS: Readonly<Record<string, TokenManagerPluginSpec>> = Object.freeze({
  CloudTokenExchange: {
    needs: "exchanges the workload's token at the cloud's token service and IAM credentials service " +
      "(HTTPS to googleapis.com); needs CLOUD_METADATA's project number and CLOUD_CLUSTER_URL, and uses " +
      "TRUST_DOMAIN when the token names no single audience",
    create: ({ env, metrics, log }) => {
      const number = projectNumber(env);
      const clusterUrl = env.string("CLOUD_CLUSTER_URL");
      if (clusterUrl === "") {
        throw new RangeError(
          "--tokenManagerPlugin=CloudTokenExchange needs CLOUD_CLUSTER_URL, the cluster's identity provider URL",
        );
      }
      return new CloudTokenExchange({
        trustDomain: env.string("TRUST_DOMAIN"),
        projectNumber: number,
        clusterUrl,
        metrics,
        log,
      });
    },
  },
});

/**
 * The plugin `name` names, built.
 *
 * @throws {RangeError} for an unknown name, or a plugin whose settings are missing
 */
export function tokenManagerPlugin(name: string, context: PluginContext): TokenExchangePlugin {
  const spec = TOKEN_MANAGER_PLUGINS[name];
  if (spec === undefined) {
    throw new RangeError(
      `--tokenManagerPlugin="${name}" is not a plugin: expected one of ${
        Object.keys(TOKEN_MANAGER_PLUGINS).join(", ")
      }`,
    );
  }
  return spec.create(context);
}
