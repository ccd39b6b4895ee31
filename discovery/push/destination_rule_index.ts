import type { Resource } from "@mesh/shared/config/resource";
import type { DestinationRuleSpec, Subset } from "@mesh/shared/config/networking/destination_rule";
import { compareByCreation } from "../model/config_order.ts";
import { deepFreeze } from "../model/deep_freeze.ts";
import { isWildcardHost, mostSpecificMatch, resolveShortName } from "../model/host_match.ts";
import { exportedTo, namespacesSingledOut, normalizeExportTo } from "../model/visibility.ts";
import type { PushProblems } from "./push_problems.ts";

/**
 * The DestinationRule that applies to a host: the rules of one namespace for that host merged, oldest first
 * (subsets appended, a duplicate subset name ignored; the first top-level traffic policy wins).
 */
export interface MergedDestinationRule {
  /** The resolved host (FQDN or wildcard) the rules name. */
  readonly host: string;
  /** Namespace of the rules. */
  readonly namespace: string;
  /** The merged spec, `host` resolved. */
  readonly spec: DestinationRuleSpec;
  /** Visibility of the oldest rule, which the merge keeps. */
  readonly exportTo: readonly string[];
  /** The rules merged, oldest first: what a cluster built from this rule depends on. */
  readonly sources: readonly Resource<DestinationRuleSpec>[];
}

/** Options of the DestinationRule index. */
export interface DestinationRuleIndexOptions {
  readonly domain: string;
  readonly rootNamespace: string;
  /** Mesh `defaultDestinationRuleExportTo`. */
  readonly defaultExportTo: readonly string[];
}

type RulesByHost = Map<string, MergedDestinationRule>;

/**
 * DestinationRules by namespace and host, looked up with Istio's precedence: the proxy's namespace (any
 * visibility), then rules the service's namespace exports, then rules the root namespace exports.
 */
export class DestinationRuleIndex {
  /** Every merged rule, by namespace then host. */
  readonly all: readonly MergedDestinationRule[];
  readonly #local = new Map<string, RulesByHost>();
  readonly #exported = new Map<string, RulesByHost>();
  readonly #rootNamespace: string;
  readonly #singledOut = new Set<string>();

  /**
   * Merges and indexes `resources` at once; duplicate subsets found while merging are recorded in `problems`.
   */
  constructor(resources: readonly Resource[], options: DestinationRuleIndexOptions, problems: PushProblems) {
    this.#rootNamespace = options.rootNamespace;
    for (const r of [...resources].sort(compareByCreation)) {
      const rule = r as Resource<DestinationRuleSpec>;
      const namespace = rule.meta.namespace;
      const host = resolveShortName(rule.spec.host, namespace, options.domain);
      const explicit = rule.spec.exportTo ?? [];
      const exportTo = normalizeExportTo(explicit.length > 0 ? explicit : options.defaultExportTo, namespace);
      merge(byNamespace(this.#local, namespace), rule, host, exportTo, problems);
      // Its own namespace sees a rule that is not exported everywhere; a namespace nobody names does not.
      if (!exportTo.includes("*")) this.#singledOut.add(namespace);
      for (const ns of namespacesSingledOut(exportTo)) this.#singledOut.add(ns);
      // A rule visible only in its own namespace is never found from another one.
      if (!(exportTo.length === 1 && exportTo[0] === namespace)) {
        merge(byNamespace(this.#exported, namespace), rule, host, exportTo, problems);
      }
    }
    for (const rules of this.#local.values()) for (const rule of rules.values()) deepFreeze(rule);
    for (const rules of this.#exported.values()) for (const rule of rules.values()) deepFreeze(rule);
    this.all = Object.freeze(
      [...this.#local.keys()].sort().flatMap((ns) =>
        [...this.#local.get(ns)!.values()].sort((a, b) => a.host.localeCompare(b.host))
      ),
    );
    Object.freeze(this);
  }

  /**
   * True when lookups from `namespace` may answer differently from lookups from a namespace that no rule
   * names. Besides exportTo, a namespace's own rules come first for its workloads: they single it out unless
   * each names a host only that namespace defines (`ownerOf`), which every namespace then finds the same way,
   * through the rules the service's namespace exports.
   */
  singlesOut(namespace: string, ownerOf: (hostname: string) => string | undefined): boolean {
    if (this.#singledOut.has(namespace)) return true;
    if (namespace === this.#rootNamespace) return false;
    for (const host of this.#local.get(namespace)?.keys() ?? []) {
      if (isWildcardHost(host) || ownerOf(host) !== namespace) return true;
    }
    return false;
  }

  /**
   * The rule a workload in `proxyNamespace` uses for `hostname` (of a service defined in `serviceNamespace`):
   * the most specific host match in the proxy's namespace (unless that is the root namespace), else in the
   * rules the service's namespace exports to the proxy's, else in those the root namespace exports.
   */
  lookup(
    proxyNamespace: string,
    hostname: string,
    serviceNamespace?: string,
  ): MergedDestinationRule | undefined {
    if (proxyNamespace !== this.#rootNamespace) {
      const local = find(this.#local.get(proxyNamespace), hostname);
      if (local) return local;
    }
    for (const namespace of [serviceNamespace, this.#rootNamespace]) {
      if (namespace === undefined) continue;
      const rule = find(this.#exported.get(namespace), hostname);
      if (rule && exportedTo(rule.exportTo, proxyNamespace)) return rule;
    }
    return undefined;
  }
}

function byNamespace(map: Map<string, RulesByHost>, namespace: string): RulesByHost {
  let rules = map.get(namespace);
  if (!rules) map.set(namespace, rules = new Map());
  return rules;
}

function find(rules: RulesByHost | undefined, hostname: string): MergedDestinationRule | undefined {
  if (!rules) return undefined;
  const host = mostSpecificMatch(hostname, rules.keys());
  return host === undefined ? undefined : rules.get(host);
}

function merge(
  rules: RulesByHost,
  rule: Resource<DestinationRuleSpec>,
  host: string,
  exportTo: readonly string[],
  problems: PushProblems,
): void {
  const existing = rules.get(host);
  if (!existing) {
    rules.set(host, {
      host,
      namespace: rule.meta.namespace,
      spec: { ...rule.spec, host },
      exportTo,
      sources: [rule],
    });
    return;
  }
  const subsets: Subset[] = [...existing.spec.subsets ?? []];
  for (const subset of rule.spec.subsets ?? []) {
    if (subsets.some((s) => s.name === subset.name)) {
      problems.add(
        "discovery_destrule_subsets",
        host,
        `Duplicate subset "${subset.name}" found while merging destination rules for "${host}"`,
      );
    } else {
      subsets.push(subset);
    }
  }
  const trafficPolicy = existing.spec.trafficPolicy ?? rule.spec.trafficPolicy;
  rules.set(host, {
    ...existing,
    spec: { ...existing.spec, ...(trafficPolicy ? { trafficPolicy } : {}), subsets },
    sources: [...existing.sources, rule],
  });
}
