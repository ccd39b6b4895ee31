import type { GroupVersionKind, Resource, ResourceMeta, SourcePosition } from "./resource.ts";
import { type Issue, ValidationReport } from "./validation/report.ts";
import { describe, integerAt, isObject, objectAt, stringAt, stringMapAt } from "./validation/fields.ts";
import { checkLabelKey, isDnsSubdomain, isLowercaseDnsLabel, labelsAt } from "./validation/labels.ts";
import { mapKeyPath } from "./validation/paths.ts";
import { deepValue } from "./validation/nesting.ts";
import { withoutNullFields } from "./validation/null_fields.ts";
import { canonicalGroup, findKind, type KindInfo, KINDS } from "./kinds.ts";

/** Top-level fields of a resource document. */
const TOP_LEVEL = ["apiVersion", "kind", "metadata", "spec", "status"];

/** The orchestrator's object metadata fields; we keep a few and accept the rest, which servers add. */
const METADATA = [
  "name",
  "namespace",
  "labels",
  "annotations",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "uid",
  "generateName",
  "selfLink",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "ownerReferences",
  "finalizers",
  "clusterName",
  "managedFields",
];

/** Options of {@link parseResource}. */
export interface ParseOptions {
  /** Namespace of a document without `metadata.namespace` (default `default`). */
  readonly defaultNamespace?: string;
  /** Resolves a field path to its 1-based source line; issues without a resolved line get the document's. */
  readonly lineOf?: (path: string) => number | undefined;
}

/** Result of {@link parseResource}: the typed resource when valid, and every issue found either way. */
export interface ParseResult {
  readonly resource?: Resource;
  readonly report: ValidationReport;
}

function apiVersionAt(
  report: ValidationReport,
  doc: Record<string, unknown>,
): { group: string; version: string } | undefined {
  const apiVersion = stringAt(report, "apiVersion", doc.apiVersion);
  if (!apiVersion) {
    if (apiVersion === "" || !isSetValue(doc.apiVersion)) {
      report.error("apiVersion", 'apiVersion is required, e.g. "networking.mesh.io/v1beta1"');
    }
    return undefined;
  }
  const slash = apiVersion.indexOf("/");
  if (slash <= 0 || slash === apiVersion.length - 1 || apiVersion.indexOf("/", slash + 1) >= 0) {
    report.error(
      "apiVersion",
      `invalid apiVersion "${apiVersion}"; expected "group/version" such as "networking.mesh.io/v1beta1"`,
    );
    return undefined;
  }
  const group = canonicalGroup(apiVersion.slice(0, slash));
  if (group === undefined) {
    const groups = [...new Set(KINDS.map((k) => k.group))].join(", ");
    report.error(
      "apiVersion",
      `unknown API group "${
        apiVersion.slice(0, slash)
      }"; expected one of ${groups} (or the networking.istio.io/security.istio.io aliases)`,
    );
    return undefined;
  }
  return { group, version: apiVersion.slice(slash + 1) };
}

function isSetValue(value: unknown): boolean {
  return value !== undefined && value !== null;
}

function kindAt(
  report: ValidationReport,
  doc: Record<string, unknown>,
  group: string | undefined,
): KindInfo | undefined {
  const kind = stringAt(report, "kind", doc.kind);
  if (!kind) {
    if (kind === "" || !isSetValue(doc.kind)) report.error("kind", "kind is required");
    return undefined;
  }
  if (group === undefined) return undefined;
  const info = findKind(group, kind);
  if (info === undefined) {
    const known = KINDS.filter((k) => k.group === group).map((k) => k.kind).join(", ");
    report.error("kind", `unknown kind "${kind}" in group "${group}"; expected one of ${known}`);
  }
  return info;
}

function metadataAt(
  report: ValidationReport,
  value: unknown,
  defaultNamespace: string,
): ResourceMeta | undefined {
  if (!isSetValue(value)) {
    report.error("metadata", "metadata with a name is required");
    return undefined;
  }
  const meta = objectAt(report, "metadata", value, METADATA);
  if (meta === undefined) return undefined;
  const name = stringAt(report, "metadata.name", meta.name) ?? "";
  if (name === "") report.error("metadata.name", "name is required");
  else if (!isDnsSubdomain(name)) {
    report.error(
      "metadata.name",
      `invalid name "${name}"; expected lower-case alphanumerics, "-" and ".", at most 253 characters`,
    );
  }
  const namespace = stringAt(report, "metadata.namespace", meta.namespace) || defaultNamespace;
  if (!isLowercaseDnsLabel(namespace)) {
    report.error(
      "metadata.namespace",
      `invalid namespace "${namespace}"; expected lower-case alphanumerics and "-", at most 63 characters`,
    );
  }
  const labels = labelsAt(report, "metadata.labels", meta.labels);
  const annotations = stringMapAt(report, "metadata.annotations", meta.annotations);
  for (const key of Object.keys(annotations ?? {})) {
    const problem = checkLabelKey(key);
    if (problem) {
      report.error(mapKeyPath("metadata.annotations", key), problem.replace("label key", "annotation key"));
    }
  }
  const resourceVersion = stringAt(report, "metadata.resourceVersion", meta.resourceVersion);
  const generation = integerAt(report, "metadata.generation", meta.generation);
  const creationTimestamp = stringAt(report, "metadata.creationTimestamp", meta.creationTimestamp);
  const uid = stringAt(report, "metadata.uid", meta.uid);
  return {
    name,
    namespace,
    ...(labels && { labels }),
    ...(annotations && { annotations }),
    ...(resourceVersion !== undefined && { resourceVersion }),
    ...(generation !== undefined && { generation }),
    ...(creationTimestamp !== undefined && { creationTimestamp }),
    ...(uid !== undefined && { uid }),
  };
}

function attachLines(issues: Issue[], options: ParseOptions, position: SourcePosition | undefined): void {
  for (const [i, issue] of issues.entries()) {
    const line = issue.line ?? options.lineOf?.(issue.path) ?? position?.line;
    if (line !== undefined) issues[i] = { ...issue, line };
  }
}

/**
 * Validates one decoded resource document: the envelope (`apiVersion` as `group/version` with Istio's
 * groups accepted as aliases, `kind`, `metadata`; no other top-level fields than `spec` and `status`) and
 * the kind's spec. Returns the typed resource (canonical group) when there is no error. Issues carry the
 * source line when `position` (the document's) or `options.lineOf` (per field) is given.
 */
export function parseResource(
  doc: unknown,
  position?: SourcePosition,
  options: ParseOptions = {},
): ParseResult {
  const report = new ValidationReport();
  if (!isObject(doc)) {
    report.error(
      "",
      `a resource must be an object with apiVersion, kind, metadata and spec, got ${describe(doc)}`,
    );
    attachLines(report.errors, options, position);
    return { report };
  }
  const deep = deepValue(doc);
  if (deep !== undefined) {
    // Nothing else is read: what reads further recurses, and this is what could not be read whole.
    report.error(
      deep.path,
      `nested more than ${deep.maxDepth} levels deep; at most ${deep.maxDepth} are accepted`,
    );
    attachLines(report.errors, options, position);
    return { report };
  }
  objectAt(report, "", doc, TOP_LEVEL);
  const api = apiVersionAt(report, doc);
  const info = kindAt(report, doc, api?.group);
  if (info && api && !info.versions.includes(api.version)) {
    report.error(
      "apiVersion",
      `${info.kind} is not served in version "${api.version}"; expected one of ${info.versions.join(", ")}`,
    );
  }
  const meta = metadataAt(report, doc.metadata, options.defaultNamespace ?? "default");
  // An absent spec is an empty message, as in Istio: whether that is valid is the kind's decision.
  const spec = isSetValue(doc.spec) ? doc.spec : {};
  if (info && meta) {
    try {
      info.validate(spec, report, { namespace: meta.namespace, name: meta.name });
    } catch (error) {
      // A validator that throws is a defect; the document is refused alone, never its source or the server.
      // (A Gateway port protocol that was a list made one throw before the protocol check took any value.)
      const why = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      report.error("spec", `could not be validated (${why}); the resource is refused`);
    }
  }
  attachLines(report.errors, options, position);
  attachLines(report.warnings, options, position);
  if (!report.ok || !info || !api || !meta) return { report };
  const gvk: GroupVersionKind = { group: info.group, version: api.version, kind: info.kind };
  // A null field is an unset one; the generators read unset fields as undefined (a DestinationRule's
  // `tcpKeepalive:` with no value made CDS throw for every proxy that saw the rule).
  return { resource: { gvk, meta, spec: withoutNullFields(spec, info.holdsStruct) }, report };
}
