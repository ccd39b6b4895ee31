import { describeInput } from "@mesh/shared/http/request_limits";
import { isObject as isRecord } from "@mesh/shared/config/validation/fields";
/** AdmissionReview API versions the webhook speaks; it answers in the version it was asked in. */
export const ADMISSION_API_VERSIONS = ["admission.k8s.io/v1", "admission.k8s.io/v1beta1"] as const;

/** One of `ADMISSION_API_VERSIONS`. */
export type AdmissionApiVersion = typeof ADMISSION_API_VERSIONS[number];

/** A group/version/kind or group/version/resource as the orchestrator sends them in a request. */
export interface AdmissionGroupVersion {
  /** API group; empty for the core group. */
  readonly group: string;
  /** API version, such as `v1alpha3`. */
  readonly version: string;
  /** Kind, such as `VirtualService`; set in a group/version/kind. */
  readonly kind?: string;
  /** Plural resource name, such as `virtualservices`; set in a group/version/resource. */
  readonly resource?: string;
}

/** The parts of an AdmissionRequest the validation webhook reads. */
export interface AdmissionRequest {
  /** Request id; the response must echo it. */
  readonly uid: string;
  /** CREATE, UPDATE, DELETE or CONNECT. */
  readonly operation: string;
  /** Group, version and kind of the object. */
  readonly kind?: AdmissionGroupVersion;
  /** Group, version and resource being changed. */
  readonly resource?: AdmissionGroupVersion;
  /** Name of the object; may be empty on CREATE when the server generates it. */
  readonly name?: string;
  /** Namespace of the object; empty for cluster-scoped objects. */
  readonly namespace?: string;
  /** The object as it would be stored (absent for DELETE). */
  readonly object?: unknown;
  /** True when the change will not be persisted. */
  readonly dryRun?: boolean;
}

/** An AdmissionResponse: allowed, or denied with a message; warnings are shown to the user either way. */
export interface AdmissionResponse {
  /** The request's `uid`, echoed. */
  readonly uid: string;
  /** Whether the change is admitted. */
  readonly allowed: boolean;
  /** Why a change was denied. */
  readonly status?: { readonly message: string };
  /** Warnings shown to the user. */
  readonly warnings?: readonly string[];
}

/** A decoded AdmissionReview request envelope. */
export interface AdmissionReview {
  /** The envelope's API version; the response uses the same one. */
  readonly apiVersion: AdmissionApiVersion;
  /** The request to review. */
  readonly request: AdmissionRequest;
}

/**
 * Checks that `body` (decoded JSON) is an AdmissionReview request in a supported version with a request uid.
 * Throws TypeError saying which field is wrong; the caller answers 400 with its message.
 */
export function parseAdmissionReview(body: unknown): AdmissionReview {
  if (!isRecord(body)) throw new TypeError("Body is not an AdmissionReview: expected a JSON object");
  const { apiVersion, kind, request } = body;
  if (!ADMISSION_API_VERSIONS.includes(apiVersion as AdmissionApiVersion)) {
    throw new TypeError(
      `Unsupported AdmissionReview apiVersion ${describeInput(apiVersion)}: expected ` +
        ADMISSION_API_VERSIONS.map((v) => `"${v}"`).join(" or "),
    );
  }
  if (kind !== "AdmissionReview") {
    throw new TypeError(`Body is not an AdmissionReview: kind is ${describeInput(kind)}`);
  }
  if (!isRecord(request)) throw new TypeError("AdmissionReview has no request object");
  if (typeof request.uid !== "string" || request.uid === "") {
    throw new TypeError("AdmissionReview request.uid is missing: expected a non-empty string");
  }
  if (typeof request.operation !== "string") {
    throw new TypeError(
      "AdmissionReview request.operation is missing: expected CREATE, UPDATE, DELETE or CONNECT",
    );
  }
  return {
    apiVersion: apiVersion as AdmissionApiVersion,
    request: {
      uid: request.uid,
      operation: request.operation,
      kind: groupVersion(request.kind),
      resource: groupVersion(request.resource),
      name: typeof request.name === "string" ? request.name : undefined,
      namespace: typeof request.namespace === "string" ? request.namespace : undefined,
      object: request.object,
      dryRun: request.dryRun === true,
    },
  };
}

/** The AdmissionReview answering `review`: same apiVersion, the response carrying the request's uid. */
export function admissionReviewResponse(
  review: AdmissionReview,
  response: Omit<AdmissionResponse, "uid">,
): { apiVersion: AdmissionApiVersion; kind: "AdmissionReview"; response: AdmissionResponse } {
  return {
    apiVersion: review.apiVersion,
    kind: "AdmissionReview",
    response: { uid: review.request.uid, ...response },
  };
}

function groupVersion(value: unknown): AdmissionGroupVersion | undefined {
  if (!isRecord(value)) return undefined;
  const text = (field: unknown) => typeof field === "string" ? field : undefined;
  return {
    group: text(value.group) ?? "",
    version: text(value.version) ?? "",
    kind: text(value.kind),
    resource: text(value.resource),
  };
}
