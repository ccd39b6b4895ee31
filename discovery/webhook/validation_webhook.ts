import type { Logger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import { PeerLogLimiter } from "@mesh/shared/log/peer_log_limiter";
import { HttpError, jsonError, jsonResponse, type Router } from "@mesh/shared/http/router";
import { type BodyLimits, readBodyText } from "@mesh/shared/http/request_limits";
import { admissionReviewResponse, parseAdmissionReview } from "./admission_review.ts";
import { type AdmissionDecision, validateAdmissionRequest } from "./validate_admission.ts";
import { ADMISSION_BUSY_MESSAGE, type AdmissionOffThread, judgeReview } from "./admission_off_thread.ts";
import { JobExpiredError } from "@mesh/shared/process/off_thread_jobs";

/** What the validation webhook needs: where to count and where to log. */
export interface ValidationWebhookDeps {
  /** Where validation counters are recorded. */
  readonly metrics: Metrics;
  /** Where malformed requests and decisions are logged. */
  readonly log: Logger;
  /** Monotonic milliseconds that pace the lines about malformed requests; `performance.now` if omitted. */
  readonly now?: () => number;
  /** Where large reviews are judged, off the event loop; all are judged in line when absent. */
  readonly offThread?: AdmissionOffThread<string, ValidationVerdict>;
}

/**
 * Both webhooks log a refusal of one kind (a malformed request's status, a denial's reason, an injection
 * refusal's type) at most once in this long; the ones in between are counted, not written.
 */
export const REFUSAL_LOG_INTERVAL_MS = 10_000;

/**
 * Limits of an AdmissionReview body. The review carries the object and, on update, its old version; the API
 * server stores objects of at most 1.5 MiB, so two of them and the envelope fit in 3 MiB, while mesh
 * resources are a few KiB. The API server calls webhooks with a 10 s default timeout: a body slower than
 * that has no one waiting for the answer.
 */
export const ADMISSION_BODY_LIMITS: BodyLimits = Object.freeze({
  maxBytes: 3 * 1024 * 1024,
  timeoutMs: 10_000,
  contentTypes: ["application/json"],
});

/** The paths the validation webhook answers on; `/admitpilot` is the reference's legacy name for `/validate`. */
export const VALIDATION_WEBHOOK_PATHS = ["/validate", "/admitpilot"] as const;

/**
 * A review judged: refused before validation (the HTTP status and why), or decided (the answer to send and
 * how to count it). Plain data, so a worker thread can judge it.
 */
export type ValidationVerdict =
  | { readonly kind: "refused"; readonly status: number; readonly message: string }
  | {
    readonly kind: "decided";
    readonly uid: string;
    readonly decision: AdmissionDecision;
    readonly answer: ReturnType<typeof admissionReviewResponse>;
  };

/** Judges the body of a validation request: decodes the AdmissionReview and validates its object. Pure. */
export function judgeValidationReview(body: string): ValidationVerdict {
  if (body.trim() === "") {
    return {
      kind: "refused",
      status: 400,
      message: "No body found: expected an AdmissionReview JSON document",
    };
  }
  let decoded: unknown;
  try {
    decoded = JSON.parse(body);
  } catch {
    // The parser's message quotes the input; the reply must not.
    return {
      kind: "refused",
      status: 400,
      message: "Cannot decode body as JSON: expected an AdmissionReview JSON document",
    };
  }
  let review;
  try {
    review = parseAdmissionReview(decoded);
  } catch (error) {
    return { kind: "refused", status: 400, message: (error as Error).message };
  }
  const decision = validateAdmissionRequest(review.request);
  return {
    kind: "decided",
    uid: review.request.uid,
    decision,
    answer: admissionReviewResponse(review, decision.response),
  };
}

/**
 * The validation webhook's HTTP handler: an AdmissionReview (`admission.k8s.io/v1` or `v1beta1`) in, the answer
 * in the same version out. An empty body is 400, a content type other than JSON 415, a body that is not JSON
 * or not an AdmissionReview 400; each such failure is counted in `config_validation_http_error{status}`.
 * Large bodies are judged by `deps.offThread`'s worker; one still waiting for its turn when the
 * API server has stopped waiting (the body limits' time) is answered 503.
 */
export function validationWebhookHandler(
  deps: ValidationWebhookDeps,
): (request: Request) => Promise<Response> {
  const httpErrors = deps.metrics.counter("config_validation_http_error");
  const paced = new PeerLogLimiter(REFUSAL_LOG_INTERVAL_MS, deps.now ?? (() => performance.now()));
  const fail = (status: number, message: string): Response => {
    httpErrors.inc({ status: String(status) });
    // A client sending malformed requests as fast as it can costs one line per status an interval.
    paced.log(
      `status ${status}`,
      (suppressed) =>
        deps.log.warn("Rejected validation webhook request", { status, error: message, suppressed }),
    );
    return jsonError(status, message);
  };
  return async (request) => {
    let body: string;
    try {
      body = await readBodyText(request, ADMISSION_BODY_LIMITS);
    } catch (error) {
      if (error instanceof HttpError) return fail(error.status, error.message);
      throw error;
    }
    let verdict: ValidationVerdict;
    try {
      verdict = await judgeReview(
        deps.offThread,
        request,
        body,
        ADMISSION_BODY_LIMITS.timeoutMs,
        body,
        () => judgeValidationReview(body),
      );
    } catch (error) {
      if (error instanceof JobExpiredError) return fail(503, `${ADMISSION_BUSY_MESSAGE} (${error.message})`);
      return fail(500, `The review could not be judged: ${(error as Error).message}`);
    }
    if (verdict.kind === "refused") return fail(verdict.status, verdict.message);
    record(verdict.decision, verdict.uid, deps, paced);
    return jsonResponse(verdict.answer);
  };
}

/** Registers the validation webhook on `/validate` and `/admitpilot` (POST). */
export function validationWebhookRoutes(router: Router, deps: ValidationWebhookDeps): Router {
  const handler = validationWebhookHandler(deps);
  for (const path of VALIDATION_WEBHOOK_PATHS) {
    router.add(path, "Validates mesh resources in AdmissionReview requests", handler, ["POST"]);
  }
  return router;
}

function record(
  decision: AdmissionDecision,
  uid: string,
  deps: ValidationWebhookDeps,
  paced: PeerLogLimiter,
): void {
  const { outcome, target, subject, response } = decision;
  const fields = { uid, subject, ...target };
  switch (outcome.result) {
    case "passed":
      deps.metrics.counter("config_validation_passed").inc({ ...target });
      deps.log.debug("Admitted configuration", { ...fields, warnings: response.warnings?.length ?? 0 });
      break;
    case "failed":
      deps.metrics.counter("config_validation_failed").inc({ ...target, reason: outcome.reason });
      if (response.allowed) {
        deps.log.debug("Admitted without checking", { ...fields, reason: outcome.reason });
      } else {
        // The caller is told every denial; the log gets one line per reason an interval.
        paced.log(`denied ${outcome.reason}`, (suppressed) =>
          deps.log.info("Denied configuration", {
            ...fields,
            reason: outcome.reason,
            error: response.status?.message,
            suppressed,
          }));
      }
      break;
    case "ignored":
      deps.log.debug("Admitted an object of another API group", fields);
      break;
  }
}
