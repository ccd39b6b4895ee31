import { canonicalGroup, findKind, findKindByPlural, KINDS } from "@mesh/shared/config/kinds";
import { pathKey, quoteExcerpt } from "@mesh/shared/config/validation/excerpt";
import { parseResource } from "@mesh/shared/config/validate_resource";
import { formatIssue, type Issue } from "@mesh/shared/config/validation/report";
import type { AdmissionRequest, AdmissionResponse } from "./admission_review.ts";
import { isObject as isRecord } from "@mesh/shared/config/validation/fields";

/** Why a request was counted in `config_validation_failed` (the reference's reason label values). */
export const FAILURE_REASON = {
  unsupportedOperation: "unsupported_operation",
  decodeError: "yaml_decode_error",
  unknownType: "unknown_type",
  invalidConfig: "invalid_config",
} as const;

/** The metric labels that identify what was validated. */
export interface ValidationTarget {
  /** API group of the object, such as `networking.mesh.io`. */
  readonly group: string;
  /** API version of the object. */
  readonly version: string;
  /** Plural resource name, such as `virtualservices`. */
  readonly resource: string;
}

/**
 * How a request counts: `passed`, `failed` with a reason (note that an unchecked DELETE counts as failed with
 * `unsupported_operation`, as in the reference, yet is allowed), or `ignored` for objects of other API groups.
 */
export type ValidationOutcome =
  | { readonly result: "passed" }
  | { readonly result: "failed"; readonly reason: string }
  | { readonly result: "ignored" };

/** The answer to one admission request and how to count it. */
export interface AdmissionDecision {
  /** The response to send, without the request's uid. */
  readonly response: Omit<AdmissionResponse, "uid">;
  /** Whether validation passed, failed (and why) or did not apply. */
  readonly outcome: ValidationOutcome;
  /** What was validated, for metric labels. */
  readonly target: ValidationTarget;
  /** `Kind namespace/name` of the object, for logs. */
  readonly subject: string;
}

/** A name as it may be logged: whole when it could be an object name (253 characters), else an excerpt. */
const shownName = (text: string) => pathKey(text, 253);

const CHECKED_OPERATIONS = ["CREATE", "UPDATE"];

/**
 * Decides one admission request: CREATE and UPDATE of mesh kinds are validated like a config file document
 * (envelope, unknown top-level fields, the kind's spec); other operations are allowed unchecked; objects of API
 * groups or kinds the mesh does not serve are denied (fail closed). Pure: no I/O, no metrics.
 */
export function validateAdmissionRequest(request: AdmissionRequest): AdmissionDecision {
  const object = request.object;
  const fields = isRecord(object) ? object : {};
  const apiVersion = typeof fields.apiVersion === "string" ? fields.apiVersion : undefined;
  const kind = typeof fields.kind === "string" ? fields.kind : request.kind?.kind ?? "";
  const group = apiVersion === undefined
    ? request.kind?.group
    : apiVersion.includes("/")
    ? apiVersion.slice(0, apiVersion.indexOf("/"))
    : ""; // "v1" and the like: the orchestrator's core group
  const target = targetOf(request, group ?? "", apiVersion, kind);
  const subject = `${shownName(kind || "object")} ${shownName(namespaceOf(fields, request))}/${
    shownName(nameOf(fields, request))
  }`;

  if (!CHECKED_OPERATIONS.includes(request.operation)) {
    return allow(target, subject, { result: "failed", reason: FAILURE_REASON.unsupportedOperation });
  }
  if (!isRecord(object)) {
    return deny(
      target,
      subject,
      FAILURE_REASON.decodeError,
      "Cannot decode configuration: request.object is missing or not a JSON object",
    );
  }
  const meshGroup = group === undefined ? undefined : canonicalGroup(group);
  if (group !== undefined && meshGroup === undefined) {
    // Fail closed: the webhook is registered for the mesh's groups only, so anything else reaching it is
    // misrouted or forged, and allowing it would let it through unchecked.
    return deny(
      target,
      subject,
      FAILURE_REASON.unknownType,
      `${subject}: API group ${quoteExcerpt(group)} is not served by the mesh; expected one of its groups`,
    );
  }
  if (meshGroup !== undefined && kind !== "" && !findKind(meshGroup, kind)) {
    const known = KINDS.filter((k) => k.group === meshGroup).map((k) => k.kind).join(", ");
    return deny(
      target,
      subject,
      FAILURE_REASON.unknownType,
      `${subject}: unrecognized kind ${quoteExcerpt(kind)} in API group "${group}"; the mesh serves ${known}`,
    );
  }
  const { report } = parseResource(object, undefined, { defaultNamespace: request.namespace || "default" });
  const warnings = firstIssues(report.warnings);
  if (!report.ok) {
    const count = report.errors.length === 1 ? "1 error" : `${report.errors.length} errors`;
    return deny(
      target,
      subject,
      FAILURE_REASON.invalidConfig,
      `${subject} is invalid (${count}): ${firstIssues(report.errors).join("; ")}`,
      warnings,
    );
  }
  return {
    response: { allowed: true, ...(warnings.length > 0 && { warnings }) },
    outcome: { result: "passed" },
    target,
    subject,
  };
}

function allow(target: ValidationTarget, subject: string, outcome: ValidationOutcome): AdmissionDecision {
  return { response: { allowed: true }, outcome, target, subject };
}

function deny(
  target: ValidationTarget,
  subject: string,
  reason: string,
  message: string,
  warnings: string[] = [],
): AdmissionDecision {
  return {
    response: { allowed: false, status: { message }, ...(warnings.length > 0 && { warnings }) },
    outcome: { result: "failed", reason },
    target,
    subject,
  };
}

function describeIssue(issue: Issue): string {
  return issue.path === "" ? issue.message : formatIssue(issue);
}

/** Most issues one answer describes: a padded object must not come back, or go to the log, at its own size. */
const MAX_DESCRIBED_ISSUES = 10;

function firstIssues(issues: readonly Issue[]): string[] {
  const described = issues.slice(0, MAX_DESCRIBED_ISSUES).map(describeIssue);
  const more = issues.length - described.length;
  return more > 0 ? [...described, `… and ${more} more`] : described;
}

/** Metric labels for objects the mesh does not serve: one fixed set, so callers cannot grow the metric. */
const OTHER_TARGET: ValidationTarget = Object.freeze({ group: "other", version: "other", resource: "other" });

/** `target` when it names a kind and version the mesh serves, else {@link OTHER_TARGET}. */
function labelled(target: ValidationTarget): ValidationTarget {
  const group = canonicalGroup(target.group);
  const kind = group === undefined ? undefined : findKindByPlural(group, target.resource);
  return kind?.versions.includes(target.version) ? target : OTHER_TARGET;
}

// The orchestrator names the resource in request.resource; a bare review (no orchestrator) may not.
function targetOf(
  request: AdmissionRequest,
  group: string,
  apiVersion: string | undefined,
  kind: string,
): ValidationTarget {
  if (request.resource?.resource) {
    return labelled({
      group: request.resource.group,
      version: request.resource.version,
      resource: request.resource.resource,
    });
  }
  const version = apiVersion?.includes("/")
    ? apiVersion.slice(apiVersion.indexOf("/") + 1)
    : apiVersion ?? "";
  const meshGroup = canonicalGroup(group);
  const plural = (meshGroup && findKind(meshGroup, kind)?.plural) || (kind ? `${kind.toLowerCase()}s` : "");
  return labelled({ group, version, resource: plural });
}

function nameOf(fields: Record<string, unknown>, request: AdmissionRequest): string {
  const metadata = isRecord(fields.metadata) ? fields.metadata : {};
  return typeof metadata.name === "string" && metadata.name !== ""
    ? metadata.name
    : request.name || "<unnamed>";
}

function namespaceOf(fields: Record<string, unknown>, request: AdmissionRequest): string {
  const metadata = isRecord(fields.metadata) ? fields.metadata : {};
  return typeof metadata.namespace === "string" && metadata.namespace !== ""
    ? metadata.namespace
    : request.namespace || "default";
}
