import { type AnalysisContext, type Analyzer, meshOrigin } from "./analyzer.ts";
import { MESSAGES } from "./analysis_message.ts";
import { selectorString, selects, workloadInMesh } from "./analysis_util.ts";
import { namespaceLabels, podContainers } from "./orch_specs.ts";

interface AuthorizationPolicySpec {
  readonly selector?: { readonly matchLabels?: Readonly<Record<string, string>> } | null;
  readonly rules?: readonly {
    readonly from?: readonly {
      readonly source?: {
        readonly namespaces?: readonly string[];
        readonly notNamespaces?: readonly string[];
      };
    }[];
  }[];
}

/** Whether the namespace `name` matches a rule's namespace expression (`*`, `prefix*`, `*suffix`, exact). */
function namespaceMatches(name: string, expression: string): boolean {
  if (expression === "*") return true;
  if (expression.startsWith("*")) return name.endsWith(expression.slice(1));
  if (expression.endsWith("*")) return name.startsWith(expression.slice(0, -1));
  return name.toLowerCase() === expression.toLowerCase();
}

/**
 * AuthorizationPolicies that select no pod in the mesh (IST0127: in their namespace, or anywhere for the root
 * namespace), and source namespaces that match no Namespace (IST0101).
 */
export const authorizationPoliciesAnalyzer: Analyzer = {
  name: "auth.AuthorizationPoliciesAnalyzer",
  description: "Checks the validity of authorization policies",
  requiresOrchestrator: true,
  *analyze(ctx: AnalysisContext) {
    const namespaces = ctx.orch("Namespace");
    const nsLabels = namespaceLabels(namespaces);
    // Labels of the in-mesh pods, by namespace.
    const meshPods = new Map<string, Readonly<Record<string, string>>[]>();
    for (const pod of ctx.orch("Pod")) {
      const ns = pod.metadata.namespace ?? "";
      const list = meshPods.get(ns) ?? [];
      meshPods.set(ns, list);
      if (workloadInMesh(pod.metadata.annotations, podContainers(pod), nsLabels.get(ns))) {
        list.push(pod.metadata.labels ?? {});
      }
      yield;
    }
    for (const r of ctx.mesh<AuthorizationPolicySpec>("AuthorizationPolicy")) {
      const ns = r.meta.namespace;
      const selector = r.spec.selector;
      const labels = selector?.matchLabels ?? {};
      const anyIn = (list: readonly Readonly<Record<string, string>>[] | undefined) =>
        (list ?? []).some((l) => selects(labels, l));
      if (ns === ctx.input.rootNamespace) {
        if (selector && ![...meshPods.values()].some(anyIn)) {
          ctx.report(MESSAGES.NoMatchingWorkloadsFound, meshOrigin(r), selectorString(labels));
        }
      } else if (!selector) {
        if ((meshPods.get(ns) ?? []).length === 0) {
          ctx.report(MESSAGES.NoMatchingWorkloadsFound, meshOrigin(r), "");
        }
      } else if (!anyIn(meshPods.get(ns))) {
        ctx.report(MESSAGES.NoMatchingWorkloadsFound, meshOrigin(r), selectorString(labels));
      }
      for (const rule of r.spec.rules ?? []) {
        for (const from of rule.from ?? []) {
          const source = from.source ?? {};
          for (const expression of [...(source.namespaces ?? []), ...(source.notNamespaces ?? [])]) {
            if (namespaces.some((n) => namespaceMatches(n.metadata.name, expression))) continue;
            ctx.report(MESSAGES.ReferencedResourceNotFound, meshOrigin(r), "namespace", expression);
          }
        }
      }
      yield;
    }
  },
};
