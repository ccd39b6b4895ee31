/**
 * The injection webhook as `mesh-discovery` starts it: the watched injector files and the `/inject` routes on
 * a router the HTTPS webhook server then serves. As in the reference, injection is set up only when the config
 * file exists at startup, and a config or values file that exists but is invalid stops startup; once running,
 * a bad change is refused and the last good files stay. With `INJECT_ENABLED=false` or no config file nothing
 * is read and `/inject` is not registered (404).
 * @module
 */
import type { Logger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import { Router } from "@mesh/shared/http/router";
import { meshConfigToJson } from "@mesh/shared/config/mesh";
import { DEFAULT_INJECT_CONFIG_FILE, InjectorFiles } from "./injector_files.ts";
import { type InjectionJob, injectWebhookRoutes } from "./inject_webhook.ts";
import type { InjectionVerdict } from "./inject_review.ts";
import { OffThreadJobs } from "@mesh/shared/process/off_thread_jobs";
import { ADMISSION_BODY_LIMITS } from "../webhook/validation_webhook.ts";

/** Options of {@link startInjection}. */
export interface InjectionOptions {
  /** `INJECT_ENABLED`. */
  readonly enabled: boolean;
  /** What the templates' `env` function reads. */
  readonly environment: Readonly<Record<string, string>>;
  /** `REVISION`. */
  readonly revision: string;
  /** The current mesh config. */
  readonly mesh: () => unknown;
  readonly metrics: Metrics;
  readonly log: Logger;
  /** The files (defaults: the reference's mount points). */
  readonly configFile?: string;
  readonly valuesFile?: string;
}

/** The running injection: the router holding `/inject` (empty when disabled) and how to stop watching. */
export interface Injection {
  readonly router: Router;
  readonly files?: InjectorFiles;
  /** The worker that judges large reviews (started by the first, ended after a quiet spell). */
  readonly jobs?: OffThreadJobs<InjectionJob, InjectionVerdict>;
  stop(): Promise<void>;
}

/**
 * The mesh config as the injector reads it. The parsed config always holds `holdApplicationUntilProxyStarts`;
 * `false` there means unset, so that `PROXY_CONFIG` carries it only when a pod's annotation sets it.
 */
function meshJson(mesh: unknown): Record<string, unknown> {
  const json = JSON.parse(meshConfigToJson(mesh, 0));
  if (json.defaultConfig?.holdApplicationUntilProxyStarts === false) {
    delete json.defaultConfig.holdApplicationUntilProxyStarts;
  }
  return json;
}

/** Loads and watches the injector files and registers `/inject` when enabled. */
export async function startInjection(options: InjectionOptions): Promise<Injection> {
  const router = new Router();
  if (!options.enabled) {
    options.log.info("Sidecar injection webhook disabled by INJECT_ENABLED=false");
    return { router, stop: () => Promise.resolve() };
  }
  const configFile = options.configFile ?? DEFAULT_INJECT_CONFIG_FILE;
  try {
    await Deno.stat(configFile);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    options.log.info("Sidecar injection webhook not set up: no injector config file", { file: configFile });
    return { router, stop: () => Promise.resolve() };
  }
  const files = new InjectorFiles({
    environment: options.environment,
    mesh: () => meshJson(options.mesh()),
    logger: options.log,
    configFile,
    ...(options.valuesFile && { valuesFile: options.valuesFile }),
  });
  await files.start();
  const problems = files.errors();
  if (problems.length > 0 || files.state() === undefined) {
    await files.stop();
    throw new Error(
      `Invalid sidecar injector files: ${problems.join("; ") || "the values file is missing"}; ` +
        "fix them, or set INJECT_ENABLED=false",
    );
  }
  const jobs = new OffThreadJobs<InjectionJob, InjectionVerdict>({
    worker: new URL("./injection_worker.ts", import.meta.url),
    maxRunMs: ADMISSION_BODY_LIMITS.timeoutMs,
  });
  injectWebhookRoutes(router, {
    metrics: options.metrics,
    log: options.log,
    state: () => files.state(),
    revision: options.revision,
    offThread: { jobs },
  });
  return {
    router,
    files,
    jobs,
    stop: async () => {
      jobs.close();
      await files.stop();
    },
  };
}
