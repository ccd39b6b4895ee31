import { childPath, type ValidationReport } from "../validation/report.ts";
import { arrayAt, objectAt, stringAt } from "../validation/fields.ts";
import type { ValidationContext } from "../validation/context.ts";
import { exportToAt } from "../validation/exportto.ts";
import { checkWildcardDomain } from "../validation/hosts.ts";
import { labelsAt } from "../validation/labels.ts";
import { checkSubsetName } from "./destination.ts";
import { type TrafficPolicy, trafficPolicyAt } from "./traffic_policy.ts";

/** A named group of a service's endpoints (by labels), with its own traffic policy. */
export interface Subset {
  /** DNS label, referenced by `destination.subset` in routes. */
  readonly name: string;
  /** Labels an endpoint must carry to be in the subset. */
  readonly labels?: Readonly<Record<string, string>>;
  /** Overrides the rule's traffic policy for the subset, part by part. */
  readonly trafficPolicy?: TrafficPolicy;
}

/** Policies that apply to traffic for a service after routing. */
export interface DestinationRuleSpec {
  /** Service name (short names resolve in the rule's namespace); wildcards allowed. */
  readonly host: string;
  /** Policy for every endpoint of the host, unless a subset overrides it. */
  readonly trafficPolicy?: TrafficPolicy;
  /** Named groups of endpoints that routes can target. */
  readonly subsets?: readonly Subset[];
  /** Namespaces the rule is visible in: names, `.` (its own) or `*` (all); none uses the mesh default. */
  readonly exportTo?: readonly string[];
}

/** Validates a DestinationRule spec as Istio 1.9 does. */
export function validateDestinationRule(
  spec: unknown,
  report: ValidationReport,
  ctx: ValidationContext,
): void {
  const obj = objectAt(report, "spec", spec, ["host", "trafficPolicy", "subsets", "exportTo"]);
  if (obj === undefined) return;
  const host = stringAt(report, "spec.host", obj.host);
  if (!host) report.error("spec.host", "host is required");
  else {
    const problem = checkWildcardDomain(host);
    if (problem) report.error("spec.host", problem);
  }
  trafficPolicyAt(report, "spec.trafficPolicy", obj.trafficPolicy);
  const names = new Set<string>();
  for (const [i, raw] of arrayAt(report, "spec.subsets", obj.subsets).entries()) {
    const at = childPath("spec.subsets", i);
    const subset = objectAt(report, at, raw, ["name", "labels", "trafficPolicy"]);
    if (subset === undefined) continue;
    const name = stringAt(report, childPath(at, "name"), subset.name) ?? "";
    const problem = checkSubsetName(name);
    if (problem) report.error(childPath(at, "name"), problem);
    else if (names.has(name)) {
      report.warn(childPath(at, "name"), `duplicate subset name "${name}"; only the first is used`);
    }
    names.add(name);
    labelsAt(report, childPath(at, "labels"), subset.labels);
    trafficPolicyAt(report, childPath(at, "trafficPolicy"), subset.trafficPolicy);
  }
  exportToAt(report, "spec.exportTo", obj.exportTo, { namespace: ctx.namespace, allowNone: false });
}
