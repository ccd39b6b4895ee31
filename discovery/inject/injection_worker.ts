/**
 * The injection webhook's worker: judges the reviews it is sent (`judgeInjectionReview`) against the injector
 * state their job carries the sources of, parsing those only when they differ from the last job's.
 *
 * @module
 */
import { serveJobs } from "@mesh/shared/process/off_thread_jobs";
import { type InjectorConfig, parseInjectorConfig, parseInjectorValues } from "./inject_config.ts";
import { type InjectionVerdict, type InjectorSources, judgeInjectionReview } from "./inject_review.ts";
import type { InjectionJob } from "./inject_webhook.ts";

let parsed:
  | { sources: InjectorSources; config: InjectorConfig; values: Readonly<Record<string, unknown>> }
  | undefined;

function sameSources(a: InjectorSources, b: InjectorSources): boolean {
  return a.configText === b.configText && a.valuesText === b.valuesText && a.configFile === b.configFile &&
    a.valuesFile === b.valuesFile && JSON.stringify(a.environment) === JSON.stringify(b.environment);
}

serveJobs((job: InjectionJob): InjectionVerdict => {
  const { sources } = job;
  if (parsed === undefined || !sameSources(parsed.sources, sources)) {
    parsed = {
      sources,
      config: parseInjectorConfig(sources.configText, sources.configFile, sources.environment),
      values: parseInjectorValues(sources.valuesText, sources.valuesFile),
    };
  }
  return judgeInjectionReview(job.body, {
    state: { config: parsed.config, values: parsed.values, mesh: job.mesh },
    revision: job.revision,
    proxyEnvs: job.proxyEnvs,
  });
});
