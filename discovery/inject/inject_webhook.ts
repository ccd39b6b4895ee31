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
import { ADMISSION_API_VERSIONS, type AdmissionApiVersion } from "../webhook/admission_review.ts";
import { ADMISSION_BODY_LIMITS, REFUSAL_LOG_INTERVAL_MS } from "../webhook/validation_webhook.ts";
import { InvalidAnnotationError } from "./annotation_validation.ts";
import type { InjectorConfig } from "./inject_config.ts";
import { injectPod } from "./inject_pod.ts";
import { skipReason } from "./inject_policy.ts";
import { createPodPatch } from "./json_patch.ts";
import { isObject as isObj } from "@mesh/shared/config/validation/fields";

type Obj = Record<string, unknown>;

/** The injector's inputs at one moment. */
export interface InjectorState {
  readonly config: InjectorConfig;
  readonly values: Readonly<Obj>;
  /** The effective mesh config as JSON. */
  readonly mesh: Readonly<Obj>;
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

interface Review {
  readonly apiVersion: AdmissionApiVersion;
  readonly request: Obj;
}

function readReview(decoded: unknown): Review {
  if (!isObj(decoded) || decoded.kind !== "AdmissionReview") {
    throw new TypeError('Body is not an AdmissionReview: expected kind "AdmissionReview"');
  }
  if (!ADMISSION_API_VERSIONS.includes(decoded.apiVersion as AdmissionApiVersion)) {
    throw new TypeError(
      `Unsupported AdmissionReview apiVersion: expected ${ADMISSION_API_VERSIONS.join(" or ")}`,
    );
  }
  if (!isObj(decoded.request)) throw new TypeError("AdmissionReview has no request object");
  return { apiVersion: decoded.apiVersion as AdmissionApiVersion, request: decoded.request };
}

/** The injection webhook's HTTP handler. */
export function injectWebhookHandler(
  deps: InjectWebhookDeps,
): (request: Request, url: URL) => Promise<Response> {
  const requests = deps.metrics.counter("sidecar_injection_requests_total");
  const successes = deps.metrics.counter("sidecar_injection_success_total");
  const skips = deps.metrics.counter("sidecar_injection_skip_total");
  const failures = deps.metrics.counter("sidecar_injection_failure_total");
  const answer = (apiVersion: AdmissionApiVersion, uid: unknown, response: Obj) =>
    jsonResponse({
      apiVersion,
      kind: "AdmissionReview",
      response: { uid: typeof uid === "string" ? uid : "", ...response },
    });
  // Per kind of refusal: a flood of bad requests (the API server retries) costs one line per kind per interval.
  const paced = new PeerLogLimiter(REFUSAL_LOG_INTERVAL_MS, deps.now ?? (() => performance.now()));
  const logRefusal = (type: string, fields: Record<string, string | number>) => {
    paced.log(
      type,
      (suppressed) => deps.log.warn("Sidecar injection refused", { type, ...fields, suppressed }),
    );
  };
  const refuse = (type: string, apiVersion: AdmissionApiVersion, uid: unknown, message: string) => {
    failures.inc({ type });
    logRefusal(type, { uid: typeof uid === "string" ? uid : "", error: message });
    return answer(apiVersion, uid, { allowed: false, status: { message } });
  };
  return async (request, url) => {
    requests.inc();
    let body: string;
    try {
      body = await readBodyText(request, ADMISSION_BODY_LIMITS);
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      failures.inc({ type: "http" });
      logRefusal("http", { status: error.status, error: error.message });
      return jsonError(error.status, error.message);
    }
    if (body.trim() === "") {
      failures.inc({ type: "http" });
      return jsonError(400, "No body found: expected an AdmissionReview JSON document");
    }
    let review: Review;
    try {
      review = readReview(JSON.parse(body));
    } catch (error) {
      const message = error instanceof SyntaxError
        ? "Cannot decode body as JSON: expected an AdmissionReview JSON document"
        : (error as Error).message;
      return refuse("decode", "admission.k8s.io/v1", undefined, message);
    }
    const { apiVersion, request: req } = review;
    const kind = isObj(req.kind) ? req.kind : {};
    const pod = req.object;
    if (
      kind.kind !== "Pod" &&
      !(isObj(pod) && (pod.kind === undefined || pod.kind === "Pod") && isObj(pod.spec))
    ) {
      skips.inc({ reason: "not a pod" });
      return answer(apiVersion, req.uid, { allowed: true });
    }
    if (!isObj(pod)) {
      return refuse("decode", apiVersion, req.uid, "AdmissionReview request.object is not a Pod object");
    }
    const state = deps.state();
    if (state === undefined) {
      return refuse("config", apiVersion, req.uid, "Injector config or values not loaded yet: cannot inject");
    }
    const metadata: Obj = isObj(pod.metadata) ? { ...pod.metadata } : {};
    if (!metadata.namespace && typeof req.namespace === "string" && req.namespace !== "") {
      metadata.namespace = req.namespace;
    }
    const subject: Obj = { ...pod, metadata };
    const spec = isObj(pod.spec) ? pod.spec : {};
    const reason = skipReason(state.config, {
      namespace: String(metadata.namespace ?? ""),
      hostNetwork: spec.hostNetwork === true,
      labels: isObj(metadata.labels) ? metadata.labels as Record<string, string> : {},
      annotations: isObj(metadata.annotations) ? metadata.annotations as Record<string, string> : {},
    });
    if (reason !== undefined) {
      skips.inc({ reason });
      deps.log.debug("Sidecar injection skipped", { uid: String(req.uid ?? ""), reason });
      return answer(apiVersion, req.uid, { allowed: true });
    }
    let injected: Obj;
    try {
      injected = injectPod(subject, {
        ...state,
        revision: deps.revision,
        proxyEnvs: parseInjectEnvs(url.pathname),
      });
    } catch (error) {
      const type = error instanceof InvalidAnnotationError ? "annotation" : "inject";
      return refuse(type, apiVersion, req.uid, `Pod injection failed: ${(error as Error).message}`);
    }
    const patch = createPodPatch(subject, injected);
    successes.inc();
    return answer(apiVersion, req.uid, {
      allowed: true,
      patchType: "JSONPatch",
      patch: base64(JSON.stringify(patch)),
    });
  };
}

function base64(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
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
