import { childPath, type ValidationReport } from "../validation/report.ts";
import { objectAt, stringAt } from "../validation/fields.ts";
import { type MatchValueKind, matchValuesAt } from "./_match_values.ts";

/** One `when` condition of an authorization rule: an attribute and the values it must (not) have. */
export interface AuthorizationCondition {
  /** Attribute name, e.g. `request.headers[User-Agent]` or `source.ip`. */
  readonly key: string;
  /** Values, any one of which the attribute must have. */
  readonly values?: readonly string[];
  /** Values the attribute must not have. */
  readonly notValues?: readonly string[];
}

const CONDITION_FIELDS = ["key", "values", "notValues"] as const;

/** Attributes whose name is used as is, with the kind of value each takes. */
const PLAIN_KEYS: Readonly<Record<string, MatchValueKind>> = {
  "source.ip": "ip",
  "remote.ip": "ip",
  "source.namespace": "string",
  "source.principal": "string",
  "request.auth.principal": "string",
  "request.auth.audiences": "string",
  "request.auth.presenter": "string",
  "destination.ip": "ip",
  "destination.port": "port",
  "connection.sni": "string",
};

/** Attributes that carry a name in brackets, e.g. `request.headers[X-Token]`. */
const MAP_KEY_PREFIXES = ["request.headers", "request.auth.claims", "experimental.envoy.filters."] as const;

/** Attributes of the old v1alpha1 API, rejected with the reason instead of "unknown attribute". */
const RETIRED_KEYS: Readonly<Record<string, string>> = {
  "destination.namespace": "is replaced by the policy's metadata.namespace",
  "destination.name": "is deprecated and only supported in v1alpha1",
  "destination.user": "is deprecated and only supported in v1alpha1",
};

/** Every supported key form, for error messages. */
export const SUPPORTED_CONDITION_KEYS: readonly string[] = [
  "request.headers[<name>]",
  ...Object.keys(PLAIN_KEYS),
  "request.auth.claims[<claim>]",
  "experimental.envoy.filters.<filter>[<path>]",
];

/** Bracketed names: one for headers, one or more (nested claims) for claims and filter metadata paths. */
const ONE_NAME = /^\[[^[\]]+\]$/;
const NESTED_NAMES = /^(\[[^[\]]+\])+$/;
const FILTER_NAME = /^[A-Za-z0-9_.-]*[A-Za-z0-9_-]\[[^[\]]+\]$/;

/**
 * Classifies a condition key: the kind of its values, or a message saying why the key is not supported.
 * Keys are case-sensitive, as the proxy's attribute names are.
 */
export function conditionKeyKind(key: string): { kind: MatchValueKind } | { problem: string } {
  const plain = PLAIN_KEYS[key];
  if (plain !== undefined) return { kind: plain };
  const retired = RETIRED_KEYS[key];
  if (retired !== undefined) return { problem: `attribute "${key}" ${retired}` };
  if (key.startsWith("destination.labels")) {
    return { problem: `attribute "${key}" is replaced by the workload selector` };
  }
  const prefix = MAP_KEY_PREFIXES.find((p) => key.startsWith(p));
  if (prefix === undefined) {
    return { problem: `unknown attribute "${key}"; supported: ${SUPPORTED_CONDITION_KEYS.join(", ")}` };
  }
  const rest = key.slice(prefix.length);
  const shape = prefix === "request.headers"
    ? ONE_NAME
    : prefix === "request.auth.claims"
    ? NESTED_NAMES
    : FILTER_NAME;
  if (!shape.test(rest)) {
    const form = SUPPORTED_CONDITION_KEYS.find((k) => k.startsWith(prefix));
    return { problem: `bad key "${key}": must have the form ${form}` };
  }
  return { kind: "string" };
}

/** Result of validating one condition, for the rule-level checks that look at keys. */
export interface ConditionFacts {
  /** The key when it is a supported attribute, else undefined. */
  readonly key?: string;
}

/**
 * Validates one `when` condition at `path`: a supported key, and at least one of `values`/`notValues`,
 * each value valid for the key's kind (IPs/CIDRs for `*.ip`, ports for `destination.port`, wildcard rules
 * for the rest).
 */
export function validateCondition(report: ValidationReport, path: string, value: unknown): ConditionFacts {
  const condition = objectAt(report, path, value, CONDITION_FIELDS);
  if (condition === undefined) return {};
  const keyPath = childPath(path, "key");
  const key = stringAt(report, keyPath, condition.key);
  let kind: MatchValueKind = "string";
  let supported: string | undefined;
  const missing = condition.key === undefined || condition.key === null;
  if (key === "" || missing) report.error(keyPath, "is required");
  else if (key !== undefined) {
    const classified = conditionKeyKind(key);
    if ("problem" in classified) report.error(keyPath, classified.problem);
    else {
      kind = classified.kind;
      supported = key;
    }
  }
  matchValuesAt(report, childPath(path, "values"), condition.values, kind);
  matchValuesAt(report, childPath(path, "notValues"), condition.notValues, kind);
  if (isAbsentOrEmptyList(condition.values) && isAbsentOrEmptyList(condition.notValues)) {
    report.error(path, `at least one of values or notValues must be set${key ? ` for key "${key}"` : ""}`);
  }
  return { key: supported };
}

/** True when a list holds no item (absent, null or `[]`); a wrongly typed list was reported already. */
function isAbsentOrEmptyList(list: unknown): boolean {
  return list === undefined || list === null || (Array.isArray(list) && list.length === 0);
}
