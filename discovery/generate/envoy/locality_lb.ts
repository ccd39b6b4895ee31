/**
 * Locality-aware load balancing for Envoy, as the reference applies it to a ClusterLoadAssignment: with a
 * `distribute` rule whose `from` matches the proxy's locality, each destination locality gets the share its
 * `to` entry names (split among the matched localities by endpoint count; unnamed localities get nothing);
 * otherwise localities are put in priorities by nearness: the proxy's sub-zone first, then its zone, then its
 * region, then a `failover` region named for the proxy's region, then the rest. Priorities only work with
 * outlier detection (Envoy moves traffic to the next priority when a priority's hosts are ejected), so the
 * caller applies this only to clusters that have it.
 *
 * @module
 */
import type { LocalityLoadBalancerSetting } from "@mesh/shared/config/networking/locality_lb";
import type { EnvoyObject } from "../route_match.ts";

/** What locality load balancing reads for one cluster: the proxy's locality and the setting in force. */
export interface LocalityLbPlan {
  /** The proxy's `region/zone/subzone`. */
  readonly proxyLocality: string;
  readonly setting: LocalityLoadBalancerSetting;
}

interface Locality {
  readonly region?: string;
  readonly zone?: string;
  readonly sub_zone?: string;
}

const parts = (label: string): [string, string, string] => {
  const [region = "", zone = "", subZone = ""] = label.split("/");
  return [region, zone, subZone];
};

const labelOf = (l: Locality | undefined) => [l?.region ?? "", l?.zone ?? "", l?.sub_zone ?? ""].join("/");

/** True when `label` falls under `pattern` (`region/zone/subzone`, a trailing `*` matching anything). */
export function localityMatches(label: string, pattern: string): boolean {
  if (pattern === "*" || pattern === "") return true;
  const want = pattern.split("/");
  const have = parts(label);
  for (let i = 0; i < want.length; i++) {
    if (want[i] === "*") return true;
    if (want[i] !== have[i]) return false;
  }
  return true;
}

/** The nearness priority of `label` seen from `proxy` before compaction (0 nearest, 4 farthest). */
function nearness(proxy: string, label: string, failoverTo: ReadonlySet<string>): number {
  const [pr, pz, ps] = parts(proxy);
  const [r, z, s] = parts(label);
  if (r === pr) {
    if (z === pz) return s === ps ? 0 : 1;
    return 2;
  }
  return failoverTo.has(r) ? 3 : 4;
}

/** Sets `priority` on each locality group by nearness, priorities made consecutive from 0. */
function applyFailover(groups: EnvoyObject[], plan: LocalityLbPlan): EnvoyObject[] {
  const [region] = parts(plan.proxyLocality);
  const failoverTo = new Set(
    (plan.setting.failover ?? []).filter((f) => f.from === region && f.to).map((f) => f.to!),
  );
  const raw = groups.map((g) => nearness(plan.proxyLocality, labelOf(g.locality as Locality), failoverTo));
  const levels = [...new Set(raw)].sort((a, b) => a - b);
  return groups.map((g, i) => {
    const priority = levels.indexOf(raw[i]);
    return priority === 0 ? g : { ...g, priority };
  });
}

/** Replaces locality weights by the shares of the first `distribute` rule for the proxy; none when no rule. */
function applyDistribute(groups: EnvoyObject[], plan: LocalityLbPlan): EnvoyObject[] | undefined {
  const rule = (plan.setting.distribute ?? []).find((d) =>
    localityMatches(plan.proxyLocality, d.from ?? "*")
  );
  if (rule === undefined) return undefined;
  const weights = new Map<EnvoyObject, number>();
  const taken = new Set<EnvoyObject>();
  for (const [pattern, share] of Object.entries(rule.to ?? {}).sort(([a], [b]) => a < b ? -1 : 1)) {
    const matched = groups.filter((g) =>
      !taken.has(g) && localityMatches(labelOf(g.locality as Locality), pattern)
    );
    const count = matched.reduce((n, g) => n + (g.lb_endpoints as unknown[]).length, 0);
    for (const group of matched) {
      taken.add(group);
      const own = (group.lb_endpoints as unknown[]).length;
      weights.set(group, Math.max(1, Math.round((share * own) / Math.max(1, count))));
    }
  }
  // Localities no `to` entry names take no traffic: Envoy ignores a locality without a weight.
  return groups.filter((g) => weights.has(g)).map((g) => ({
    ...g,
    load_balancing_weight: { value: weights.get(g)! },
  }));
}

/** The locality groups of a ClusterLoadAssignment with `plan` applied. */
export function applyLocalityLb(groups: readonly EnvoyObject[], plan: LocalityLbPlan): EnvoyObject[] {
  return applyDistribute([...groups], plan) ?? applyFailover([...groups], plan);
}

/** True when a cluster needs locality-weighted load balancing on (a `distribute` rule is in force). */
export function usesLocalityWeights(setting: LocalityLoadBalancerSetting | undefined): boolean {
  return (setting?.distribute ?? []).length > 0 && setting?.enabled !== false;
}
