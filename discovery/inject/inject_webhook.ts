/**
 * The sidecar-injection webhook: `POST /inject` (and `/inject/<key>/<value>/…`, whose pairs become proxy env:
 * `cluster` → `MESH_META_CLUSTER_ID`, `net` → `MESH_META_NETWORK`, any other key upper-cased), an
 * AdmissionReview (`admission.k8s.io/v1` or `v1beta1`) of a Pod in, the answer in the same version out with a
 * JSON patch. Every request moves `sidecar_injection_requests_total` and then one of `_success_total`,
 * `_skip_total{reason}` or `_failure_total{type}`.
 * @module
 */
import { PeerLogLimiter } from "@mesh/shared/log/peer_log_limiter";
import type { Logger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import { HttpError, jsonError, jsonResponse, type Router } from "@mesh/shared/http/router";
import { readBodyText } from "@mesh/shared/http/request_limits";
import { JobExpiredError } from "@mesh/shared/process/off_thread_jobs";
import { ADMISSION_BODY_LIMITS, REFUSAL_LOG_INTERVAL_MS } from "../webhook/validation_webhook.ts";
import {
  ADMISSION_BUSY_MESSAGE,
  type AdmissionOffThread,
  judgeReview,
} from "../webhook/admission_off_thread.ts";
import {
  type InjectionVerdict,
  type InjectorSources,
  type InjectorState,
  judgeInjectionReview,
} from "./inject_review.ts";

/** What the injection worker is sent: a review's body and everything it is judged against, as plain data. */
export interface InjectionJob {
  readonly body: string;
  readonly sources: InjectorSources;
  readonly mesh: Readonly<Record<string, unknown>>;
  readonly revision: string;
  readonly proxyEnvs: Readonly<Record<string, string>>;
}

/** What the injection webhook needs. */
export interface InjectWebhookDeps {
  readonly metrics: Metrics;
  readonly log: Logger;
  /** The current inputs; undefined while the config or values files have never loaded. */
  readonly state: () => InjectorState | undefined;
  /** `REVISION`, printed as `mesh.io/rev` by the template. */
  readonly revision: string;
  /** Milliseconds of a monotonic clock, for pacing the refusal log (default `performance.now`). */
  readonly now?: () => number;
  /** Where large reviews are judged, off the event loop; all are judged in line when absent. */
  readonly offThread?: AdmissionOffThread<InjectionJob, InjectionVerdict>;
}

/** The path the webhook answers on; `/inject/…` carries key/value pairs. */
export const INJECT_PATH = "/inject";

const URL_PARAMETER_ENV: Readonly<Record<string, string>> = {
  cluster: "MESH_META_CLUSTER_ID",
  net: "MESH_META_NETWORK",
};

/** The proxy env of a `/inject/<key>/<value>/…` path, as the reference reads it (a trailing key is ignored). */
export function parseInjectEnvs(pathname: string): Record<string, string> {
  const parts = pathname.replace(/\/$/, "").split("/");
  const envs: Record<string, string> = {};
  for (let i = 2; i + 1 < parts.length; i += 2) {
    const name = URL_PARAMETER_ENV[parts[i]] ?? parts[i].toUpperCase();
    if (name !== "") envs[name] = decodeURIComponent(parts[i + 1]);
  }
  return envs;
}

/** The injection webhook's HTTP handler. */
export function injectWebhookHandler(
  deps: InjectWebhookDeps,
): (request: Request, url: URL) => Promise<Response> {
  const requests = deps.metrics.counter("sidecar_injection_requests_total");
  const successes = deps.metrics.counter("sidecar_injection_success_total");
  const skips = deps.metrics.counter("sidecar_injection_skip_total");
  const failures = deps.metrics.counter("sidecar_injection_failure_total");
  // Per kind of refusal: a flood of bad requests (the API server retries) costs one line per kind per interval.
  const paced = new PeerLogLimiter(REFUSAL_LOG_INTERVAL_MS, deps.now ?? (() => performance.now()));
  const logRefusal = (type: string, fields: Record<string, string | number>) => {
    paced.log(
      type,
      (suppressed) => deps.log.warn("Sidecar injection refused", { type, ...fields, suppressed }),
    );
  };
  const httpFailure = (status: number, message: string) => {
    failures.inc({ type: "http" });
    logRefusal("http", { status, error: message });
    return jsonError(status, message);
  };
  return async (request, url) => {
    requests.inc();
    let body: string;
    try {
      body = await readBodyText(request, ADMISSION_BODY_LIMITS);
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      return httpFailure(error.status, error.message);
    }
    const state = deps.state();
    const context = { state, revision: deps.revision, proxyEnvs: parseInjectEnvs(url.pathname) };
    // Without the texts its state came from, a worker cannot build that state: such a review is judged in line.
    const job = state?.sources === undefined ? undefined : {
      body,
      sources: state.sources,
      mesh: state.mesh,
      revision: context.revision,
      proxyEnvs: context.proxyEnvs,
    };
    let verdict: InjectionVerdict;
    try {
      verdict = job === undefined ? judgeInjectionReview(body, context) : await judgeReview(
        deps.offThread,
        request,
        body,
        ADMISSION_BODY_LIMITS.timeoutMs,
        job,
        () => judgeInjectionReview(body, context),
      );
    } catch (error) {
      if (error instanceof JobExpiredError) {
        return httpFailure(503, `${ADMISSION_BUSY_MESSAGE} (${error.message})`);
      }
      return httpFailure(500, `The review could not be judged: ${(error as Error).message}`);
    }
    switch (verdict.kind) {
      case "empty":
        failures.inc({ type: "http" });
        return jsonError(400, "No body found: expected an AdmissionReview JSON document");
      case "skipped":
        skips.inc({ reason: verdict.reason });
        if (verdict.logged) {
          deps.log.debug("Sidecar injection skipped", {
            uid: verdict.answer.response.uid,
            reason: verdict.reason,
          });
        }
        break;
      case "refused":
        failures.inc({ type: verdict.type });
        logRefusal(verdict.type, { uid: verdict.answer.response.uid, error: verdict.message });
        break;
      case "injected":
        successes.inc();
        break;
    }
    return jsonResponse(verdict.answer);
  };
}

/** Registers the injection webhook on `/inject` and `/inject/…` (POST). */
export function injectWebhookRoutes(router: Router, deps: InjectWebhookDeps): Router {
  const handler = injectWebhookHandler(deps);
  router.add(INJECT_PATH, "Injects the mesh sidecar into Pods in AdmissionReview requests", handler, [
    "POST",
  ]);
  router.add(`${INJECT_PATH}/`, "The injection webhook with /<key>/<value> proxy env pairs", handler, [
    "POST",
  ]);
  return router;
}
