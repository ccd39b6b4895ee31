import { childPath, type ValidationReport } from "../validation/report.ts";
import { arrayAt, isObject, objectAt } from "../validation/fields.ts";
import type { ValidationContext } from "../validation/context.ts";
import { workloadSelectorAt } from "../validation/selector.ts";
import { enumAt, isSet } from "../validation/values.ts";
import { type EnvoyConfigObjectMatch, matchAt } from "./envoy_filter_match.ts";

/** Which kind of generated Envoy object a patch applies to. */
export type ApplyTo =
  | "LISTENER"
  | "FILTER_CHAIN"
  | "NETWORK_FILTER"
  | "HTTP_FILTER"
  | "ROUTE_CONFIGURATION"
  | "VIRTUAL_HOST"
  | "HTTP_ROUTE"
  | "CLUSTER"
  | "EXTENSION_CONFIG";

/** What a patch does to the matched object. */
export type PatchOperation =
  | "MERGE"
  | "ADD"
  | "REMOVE"
  | "INSERT_BEFORE"
  | "INSERT_AFTER"
  | "INSERT_FIRST"
  | "REPLACE";

/** One patch: where it applies, what it matches, and the change. */
export interface EnvoyConfigObjectPatch {
  /** Which kind of Envoy object the patch changes. */
  readonly applyTo: ApplyTo;
  /** Which objects of that kind it changes; absent matches all. */
  readonly match?: EnvoyConfigObjectMatch;
  /** How the object is changed, and the value merged, added or inserted. */
  readonly patch: {
    readonly operation: PatchOperation;
    /** The Envoy configuration (JSON form of the Envoy type for `applyTo`) to merge, add or insert. */
    readonly value?: Readonly<Record<string, unknown>>;
    readonly filterClass?: "UNSPECIFIED" | "AUTHN" | "AUTHZ" | "STATS";
  };
}

/** Patches to the Envoy configuration generated for the selected workloads. */
export interface EnvoyFilterSpec {
  /**
   * Workloads the patches apply to, by labels; absent means every workload of the namespace (or mesh, in the
   * root namespace).
   */
  readonly workloadSelector?: { readonly labels?: Readonly<Record<string, string>> };
  /** The patches, applied in order. */
  readonly configPatches?: readonly EnvoyConfigObjectPatch[];
}

const APPLY_TO: readonly ApplyTo[] = [
  "LISTENER",
  "FILTER_CHAIN",
  "NETWORK_FILTER",
  "HTTP_FILTER",
  "ROUTE_CONFIGURATION",
  "VIRTUAL_HOST",
  "HTTP_ROUTE",
  "CLUSTER",
  "EXTENSION_CONFIG",
];
const OPERATIONS: readonly PatchOperation[] = [
  "MERGE",
  "ADD",
  "REMOVE",
  "INSERT_BEFORE",
  "INSERT_AFTER",
  "INSERT_FIRST",
  "REPLACE",
];
// Operations that position a new element in an ordered list: only lists of filters and routes have one.
const POSITIONAL: readonly PatchOperation[] = ["INSERT_BEFORE", "INSERT_AFTER", "INSERT_FIRST"];
const ORDERED: readonly ApplyTo[] = ["NETWORK_FILTER", "HTTP_FILTER", "HTTP_ROUTE"];

function patchAt(report: ValidationReport, path: string, value: unknown, applyTo: ApplyTo | undefined): void {
  if (!isSet(value)) {
    report.error(path, "patch is required");
    return;
  }
  const obj = objectAt(report, path, value, ["operation", "value", "filterClass"]);
  if (obj === undefined) return;
  const opPath = childPath(path, "operation");
  const operation = enumAt(
    report,
    opPath,
    obj.operation === "INVALID" ? undefined : obj.operation,
    OPERATIONS,
  );
  if (!isSet(obj.operation) || obj.operation === "INVALID") {
    report.error(opPath, "patch operation is required");
  }
  enumAt(report, childPath(path, "filterClass"), obj.filterClass, ["UNSPECIFIED", "AUTHN", "AUTHZ", "STATS"]);
  if (isSet(obj.filterClass) && obj.filterClass !== "UNSPECIFIED" && applyTo !== "HTTP_FILTER") {
    report.warn(childPath(path, "filterClass"), "filterClass has effect only on HTTP_FILTER patches");
  }
  const valuePath = childPath(path, "value");
  if (isSet(obj.value) && !isObject(obj.value)) {
    report.error(valuePath, "must be an object (the Envoy configuration to apply)");
  }
  if (operation && operation !== "REMOVE" && !isSet(obj.value)) {
    report.error(valuePath, `patch value is required for operation ${operation}`);
  }
  if (operation && applyTo && POSITIONAL.includes(operation) && !ORDERED.includes(applyTo)) {
    report.warn(opPath, `${operation} has effect only on ${ORDERED.join(", ")} patches, not ${applyTo}`);
  }
}

/** Validates an EnvoyFilter spec: the selector and every config patch. */
export function validateEnvoyFilter(spec: unknown, report: ValidationReport, _ctx: ValidationContext): void {
  const obj = objectAt(report, "spec", spec, ["workloadSelector", "configPatches"]);
  if (obj === undefined) return;
  workloadSelectorAt(report, "spec.workloadSelector", obj.workloadSelector, {
    field: "labels",
    requireLabels: true,
  });
  for (const [i, raw] of arrayAt(report, "spec.configPatches", obj.configPatches).entries()) {
    const at = childPath("spec.configPatches", i);
    const cp = objectAt(report, at, raw, ["applyTo", "match", "patch"]);
    if (cp === undefined) continue;
    const applyToPath = childPath(at, "applyTo");
    const applyTo = enumAt(report, applyToPath, cp.applyTo === "INVALID" ? undefined : cp.applyTo, APPLY_TO);
    if (!isSet(cp.applyTo) || cp.applyTo === "INVALID") report.error(applyToPath, "applyTo is required");
    matchAt(report, childPath(at, "match"), cp.match, applyTo);
    patchAt(report, childPath(at, "patch"), cp.patch, applyTo);
  }
}
