/**
 * One injection review judged, without I/O: the AdmissionReview body in, what to answer and how to count it
 * out. The webhook's handler runs it in line for small bodies and in its worker for large ones.
 * @module
 */
import { ADMISSION_API_VERSIONS, type AdmissionApiVersion } from "../webhook/admission_review.ts";
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
  /** The texts `config` and `values` were parsed from, so a worker can parse the same; absent, none can. */
  readonly sources?: InjectorSources;
}

/** What an {@link InjectorState}'s config and values were parsed from. */
export interface InjectorSources {
  readonly configText: string;
  readonly configFile: string;
  readonly valuesText: string;
  readonly valuesFile: string;
  /** What the templates' `env` function reads. */
  readonly environment: Readonly<Record<string, string>>;
}

/** What a review is judged against besides its body. */
export interface ReviewContext {
  /** The injector's inputs; undefined while its files have never loaded. */
  readonly state: InjectorState | undefined;
  /** `REVISION`, printed as `mesh.io/rev` by the template. */
  readonly revision: string;
  /** The proxy env of the request's `/inject/<key>/<value>/…` path. */
  readonly proxyEnvs: Readonly<Record<string, string>>;
}

/** The AdmissionReview to answer with. */
export interface InjectionAnswer {
  readonly apiVersion: AdmissionApiVersion;
  readonly kind: "AdmissionReview";
  readonly response: Obj & { readonly uid: string };
}

/**
 * A judged review: an empty body (400, no review to answer), or an answer with how it counts: injected,
 * skipped (and why; `logged` when the pod-level policy decided it), or refused (the failure type and message).
 */
export type InjectionVerdict =
  | { readonly kind: "empty" }
  | { readonly kind: "injected"; readonly answer: InjectionAnswer }
  | {
    readonly kind: "skipped";
    readonly reason: string;
    readonly logged: boolean;
    readonly answer: InjectionAnswer;
  }
  | {
    readonly kind: "refused";
    readonly type: string;
    readonly message: string;
    readonly answer: InjectionAnswer;
  };

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

function answer(apiVersion: AdmissionApiVersion, uid: unknown, response: Obj): InjectionAnswer {
  return {
    apiVersion,
    kind: "AdmissionReview",
    response: { uid: typeof uid === "string" ? uid : "", ...response },
  };
}

function refused(
  type: string,
  apiVersion: AdmissionApiVersion,
  uid: unknown,
  message: string,
): InjectionVerdict {
  return {
    kind: "refused",
    type,
    message,
    answer: answer(apiVersion, uid, { allowed: false, status: { message } }),
  };
}

/** Judges the body of an injection request: decodes the review, applies the policy, injects and diffs. Pure. */
export function judgeInjectionReview(body: string, context: ReviewContext): InjectionVerdict {
  if (body.trim() === "") return { kind: "empty" };
  let review: Review;
  try {
    review = readReview(JSON.parse(body));
  } catch (error) {
    const message = error instanceof SyntaxError
      ? "Cannot decode body as JSON: expected an AdmissionReview JSON document"
      : (error as Error).message;
    return refused("decode", "admission.k8s.io/v1", undefined, message);
  }
  const { apiVersion, request: req } = review;
  const kind = isObj(req.kind) ? req.kind : {};
  const pod = req.object;
  if (
    kind.kind !== "Pod" &&
    !(isObj(pod) && (pod.kind === undefined || pod.kind === "Pod") && isObj(pod.spec))
  ) {
    return {
      kind: "skipped",
      reason: "not a pod",
      logged: false,
      answer: answer(apiVersion, req.uid, { allowed: true }),
    };
  }
  if (!isObj(pod)) {
    return refused("decode", apiVersion, req.uid, "AdmissionReview request.object is not a Pod object");
  }
  const state = context.state;
  if (state === undefined) {
    return refused("config", apiVersion, req.uid, "Injector config or values not loaded yet: cannot inject");
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
    return { kind: "skipped", reason, logged: true, answer: answer(apiVersion, req.uid, { allowed: true }) };
  }
  let injected: Obj;
  try {
    injected = injectPod(subject, { ...state, revision: context.revision, proxyEnvs: context.proxyEnvs });
  } catch (error) {
    const type = error instanceof InvalidAnnotationError ? "annotation" : "inject";
    return refused(type, apiVersion, req.uid, `Pod injection failed: ${(error as Error).message}`);
  }
  const patch = createPodPatch(subject, injected);
  return {
    kind: "injected",
    answer: answer(apiVersion, req.uid, {
      allowed: true,
      patchType: "JSONPatch",
      patch: base64(JSON.stringify(patch)),
    }),
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
