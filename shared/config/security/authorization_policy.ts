import { childPath, type ValidationReport } from "../validation/report.ts";
import { arrayAt, describe, objectAt, stringAt } from "../validation/fields.ts";
import type { ValidationContext } from "../validation/context.ts";
import { validateWorkloadSelector, type WorkloadSelector } from "./workload_selector.ts";
import { type AuthorizationCondition, validateCondition } from "./authorization_condition.ts";
import {
  type AuthorizationOperation,
  type AuthorizationSource,
  HTTP_ONLY_OPERATION_FIELDS,
  HTTP_ONLY_SOURCE_FIELDS,
  type PresentFields,
  validateOperation,
  validateSource,
} from "./authorization_match.ts";

/** What a policy does with the requests its rules match. `ALLOW` is the default. */
export type AuthorizationAction = "ALLOW" | "DENY" | "AUDIT" | "CUSTOM";

/** Every action, in the API's order. */
export const AUTHORIZATION_ACTIONS: readonly AuthorizationAction[] = ["ALLOW", "DENY", "AUDIT", "CUSTOM"];

/** The external authorizer a `CUSTOM` policy delegates to, by its name in the mesh config. */
export interface ExtensionProvider {
  /** Name of an extension provider in the mesh config's `extensionProviders`. */
  readonly name: string;
}

/** One `from` entry of a rule. */
export interface RuleFrom {
  /** Who the request must come from. */
  readonly source: AuthorizationSource;
}

/** One `to` entry of a rule. */
export interface RuleTo {
  /** What the request must ask for. */
  readonly operation: AuthorizationOperation;
}

/**
 * A rule matches a request when any `from`, any `to` and every `when` match; an absent list matches
 * anything, so the empty rule `{}` matches every request.
 */
export interface AuthorizationRule {
  /** Sources, any one of which must match. */
  readonly from?: readonly RuleFrom[];
  /** Operations, any one of which must match. */
  readonly to?: readonly RuleTo[];
  /** Conditions, all of which must match. */
  readonly when?: readonly AuthorizationCondition[];
}

/** Spec of an AuthorizationPolicy (security.mesh.io/v1beta1), with Istio 1.9's fields and meaning. */
export interface AuthorizationPolicySpec {
  /**
   * Workloads the policy applies to; absent means every workload of its namespace (or of the mesh, in the
   * root namespace).
   */
  readonly selector?: WorkloadSelector;
  /** Absent: an ALLOW policy matches nothing (so it denies everything it selects). */
  readonly rules?: readonly AuthorizationRule[];
  /** What a match does (default `ALLOW`). */
  readonly action?: AuthorizationAction;
  /** Only with the `CUSTOM` action. */
  readonly provider?: ExtensionProvider;
}

const SPEC_FIELDS = ["selector", "rules", "action", "provider"] as const;
const RULE_FIELDS = ["from", "to", "when"] as const;

/** Source fields and condition keys the external authorizer of a CUSTOM policy is not told about. */
const CUSTOM_UNSUPPORTED_SOURCE: readonly (keyof AuthorizationSource)[] = [
  "namespaces",
  "notNamespaces",
  "principals",
  "notPrincipals",
  "requestPrincipals",
  "notRequestPrincipals",
];

/** Condition keys that cannot be used with the CUSTOM action. */
function customUnsupportedKey(key: string): boolean {
  return key === "source.namespace" || key === "source.principal" || key.startsWith("request.auth.");
}

/** Condition keys that only HTTP requests carry. */
function httpOnlyKey(key: string): boolean {
  return key.startsWith("request.");
}

/**
 * Validates an AuthorizationPolicy spec as strictly as Istio 1.9: selector labels, the action and its
 * provider, and every rule (sources, operations, conditions), reporting errors and warnings under `spec`.
 */
export function validateAuthorizationPolicy(
  spec: unknown,
  report: ValidationReport,
  _ctx: ValidationContext,
): void {
  // A document without a spec has every field at its default, as in Istio.
  const s = objectAt(report, "spec", spec ?? {}, SPEC_FIELDS);
  if (s === undefined) return;
  validateWorkloadSelector(report, "spec.selector", s.selector);
  const action = readAction(report, s.action);
  const providerGiven = s.provider !== undefined && s.provider !== null;
  const providerName = readProvider(report, s.provider);

  const rulesAbsent = s.rules === undefined || s.rules === null;
  const rules = arrayAt(report, "spec.rules", s.rules);
  const triggerHint = "add an empty rule {} to trigger it for every request";
  if ((action === "DENY" || action === "CUSTOM") && rulesAbsent) {
    report.error(
      "spec.rules",
      `is required with the ${action} action: without rules it is never triggered; ${triggerHint}`,
    );
  } else if (action !== undefined && action !== "ALLOW" && Array.isArray(s.rules) && rules.length === 0) {
    report.warn(
      "spec.rules",
      `an empty list matches no request, so this ${action} policy is never triggered; ${triggerHint}`,
    );
  } else if (action === "AUDIT" && rulesAbsent) {
    report.warn("spec.rules", `without rules this AUDIT policy is never triggered; ${triggerHint}`);
  }

  if (action === "CUSTOM") {
    if (!providerGiven) report.error("spec.provider", "is required with the CUSTOM action");
    else if (providerName === "") report.error("spec.provider.name", "is required with the CUSTOM action");
  } else if (providerGiven && action !== undefined) {
    report.error("spec.provider", `is only allowed with the CUSTOM action, got action "${action}"`);
  }

  rules.forEach((rule, i) => validateRule(report, childPath("spec.rules", i), rule, action));
}

/** Reads `spec.action`; returns the action (ALLOW when absent) or undefined when invalid. */
function readAction(report: ValidationReport, value: unknown): AuthorizationAction | undefined {
  if (value === undefined || value === null) return "ALLOW";
  if (typeof value === "string" && (AUTHORIZATION_ACTIONS as readonly string[]).includes(value)) {
    return value as AuthorizationAction;
  }
  report.error("spec.action", `must be one of ${AUTHORIZATION_ACTIONS.join(", ")}, got ${describe(value)}`);
  return undefined;
}

/** Reads `spec.provider`; returns its name ("" when missing), or undefined when there is no provider. */
function readProvider(report: ValidationReport, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  const provider = objectAt(report, "spec.provider", value, ["name"]);
  if (provider === undefined) return undefined;
  return stringAt(report, "spec.provider.name", provider.name) ?? "";
}

/** Validates one rule and the checks that span its parts (CUSTOM restrictions, DENY on TCP). */
function validateRule(
  report: ValidationReport,
  path: string,
  value: unknown,
  action: AuthorizationAction | undefined,
): void {
  const rule = objectAt(report, path, value, RULE_FIELDS);
  if (rule === undefined) return;
  const httpOnly: string[] = [];
  let restrictsPorts = false;

  const fromPath = childPath(path, "from");
  if (Array.isArray(rule.from) && rule.from.length === 0) {
    report.error(fromPath, "must not be empty; omit it to match requests from any source");
  }
  arrayAt(report, fromPath, rule.from).forEach((entry, j) => {
    const at = childPath(fromPath, j);
    const sourcePath = childPath(at, "source");
    const source = entryAt(report, at, entry, "source");
    if (source === undefined) return;
    const present = validateSource(report, sourcePath, source);
    httpOnly.push(...HTTP_ONLY_SOURCE_FIELDS.filter((f) => present.has(f)).map((f) => `source.${f}`));
    if (action === "CUSTOM") rejectForCustom(report, sourcePath, present);
  });

  const toPath = childPath(path, "to");
  if (Array.isArray(rule.to) && rule.to.length === 0) {
    report.error(toPath, "must not be empty; omit it to match any operation");
  }
  arrayAt(report, toPath, rule.to).forEach((entry, j) => {
    const at = childPath(toPath, j);
    const operation = entryAt(report, at, entry, "operation");
    if (operation === undefined) return;
    const present = validateOperation(report, childPath(at, "operation"), operation);
    httpOnly.push(...HTTP_ONLY_OPERATION_FIELDS.filter((f) => present.has(f)).map((f) => `operation.${f}`));
    if (present.has("ports") || present.has("notPorts")) restrictsPorts = true;
  });

  const whenPath = childPath(path, "when");
  arrayAt(report, whenPath, rule.when).forEach((entry, k) => {
    const at = childPath(whenPath, k);
    const { key } = validateCondition(report, at, entry);
    if (key === undefined) return;
    if (key === "destination.port") restrictsPorts = true;
    if (httpOnlyKey(key)) httpOnly.push(`when "${key}"`);
    if (action === "CUSTOM" && customUnsupportedKey(key)) {
      report.error(childPath(at, "key"), `"${key}" is not supported with the CUSTOM action`);
    }
  });

  if (action === "DENY" && httpOnly.length > 0 && !restrictsPorts) {
    const fields = [...new Set(httpOnly)].join(", ");
    report.warn(
      path,
      `on TCP ports the proxy ignores HTTP-only fields (${fields}), so this DENY rule denies more TCP traffic ` +
        `than written; set to[].operation.ports to limit it to HTTP ports`,
    );
  }
}

/** Reads a `from`/`to` entry at `path` and returns its one required child (`source`/`operation`). */
function entryAt(report: ValidationReport, path: string, entry: unknown, child: string): unknown {
  const obj = objectAt(report, path, entry, [child]);
  if (obj === undefined) return undefined;
  if (obj[child] === undefined || obj[child] === null) {
    report.error(childPath(path, child), "is required");
    return undefined;
  }
  return obj[child];
}

/** Reports source fields the external authorizer of a CUSTOM policy cannot evaluate. */
function rejectForCustom(
  report: ValidationReport,
  sourcePath: string,
  present: PresentFields<AuthorizationSource>,
): void {
  for (const field of CUSTOM_UNSUPPORTED_SOURCE) {
    if (present.has(field)) {
      report.error(childPath(sourcePath, field), "is not supported with the CUSTOM action");
    }
  }
}
