import type { Resource } from "@mesh/shared/config/resource";
import { type AnalysisContext, type Analyzer, meshOrigin } from "./analyzer.ts";
import { MESSAGES } from "./analysis_message.ts";

interface SidecarSpec {
  readonly workloadSelector?: { readonly labels?: Readonly<Record<string, string>> };
}

/** More than one Sidecar without a workload selector in a namespace (IST0111 on each). */
export const sidecarDefaultSelectorAnalyzer: Analyzer = {
  name: "sidecar.DefaultSelectorAnalyzer",
  description: "Validates that there aren't multiple sidecar resources that have no selector",
  requiresOrchestrator: false,
  *analyze(ctx: AnalysisContext) {
    const byNamespace = new Map<string, Resource<SidecarSpec>[]>();
    for (const r of ctx.mesh<SidecarSpec>("Sidecar")) {
      if (r.spec.workloadSelector !== undefined && r.spec.workloadSelector !== null) continue;
      const list = byNamespace.get(r.meta.namespace) ?? [];
      list.push(r);
      byNamespace.set(r.meta.namespace, list);
    }
    yield;
    for (const [namespace, list] of byNamespace) {
      if (list.length < 2) continue;
      const names = list.map((r) => r.meta.name);
      for (const r of list) {
        ctx.report(MESSAGES.MultipleSidecarsWithoutWorkloadSelectors, meshOrigin(r), names, namespace);
      }
      yield;
    }
  },
};
