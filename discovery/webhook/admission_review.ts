/** AdmissionReview API versions the webhook speaks; it answers in the version it was asked in. */
export const ADMISSION_API_VERSIONS = ["admission.k8s.io/v1", "admission.k8s.io/v1beta1"] as const;

/** One of `ADMISSION_API_VERSIONS`. */
export type AdmissionApiVersion = typeof ADMISSION_API_VERSIONS[number];

/** A group/version/kind or group/version/resource as the orchestrator sends them in a request. */
export interface AdmissionGroupVersion {
  readonly group: string;
  readonly version: string;
  readonly kind?: string;
  readonly resource?: string;
}

/** The parts of an AdmissionRequest the validation webhook reads. */
export interface AdmissionRequest {
  readonly uid: string;
  /** CREATE, UPDATE, DELETE or CONNECT. */
  readonly operation: string;
  readonly kind?: AdmissionGroupVersion;
  readonly resource?: AdmissionGroupVersion;
  readonly name?: string;
  readonly namespace?: string;
  /** The object as it would be stored (absent for DELETE). */
  readonly object?: unknown;
  readonly dryRun?: boolean;
}

/** An AdmissionResponse: allowed, or denied with a message; warnings are shown to the user either way. */
export interface AdmissionResponse {
  readonly uid: string;
  readonly allowed: boolean;
  readonly status?: { readonly message: string };
  readonly warnings?: readonly string[];
}

/** A decoded AdmissionReview request envelope. */
export interface AdmissionReview {
  readonly apiVersion: AdmissionApiVersion;
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
      `Unsupported AdmissionReview apiVersion ${JSON.stringify(apiVersion)}: expected ` +
        ADMISSION_API_VERSIONS.map((v) => `"${v}"`).join(" or "),
    );
  }
  if (kind !== "AdmissionReview") {
    throw new TypeError(`Body is not an AdmissionReview: kind is ${JSON.stringify(kind)}`);
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

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
