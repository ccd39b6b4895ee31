import type { Resource } from "@mesh/shared/config/resource";
import { type AnalysisContext, type Analyzer, meshOrigin } from "./analyzer.ts";
import { MESSAGES } from "./analysis_message.ts";
import { selectorString, selects } from "./analysis_util.ts";

interface SidecarSpec {
  readonly workloadSelector?: { readonly labels?: Readonly<Record<string, string>> };
}

/** Sidecar selectors matching no pod of their namespace (IST0101), and pods several Sidecars select (IST0110). */
export const sidecarSelectorAnalyzer: Analyzer = {
  name: "sidecar.SelectorAnalyzer",
  description: "Validates that sidecars that define a workload selector match at least one pod, and that " +
    "there aren't multiple sidecar resources that select overlapping pods",
  requiresOrchestrator: true,
  *analyze(ctx: AnalysisContext) {
    const pods = ctx.orch("Pod");
    const sidecarsOfPod = new Map<string, { namespace: string; name: string; sidecars: Resource[] }>();
    for (const r of ctx.mesh<SidecarSpec>("Sidecar")) {
      const selector = r.spec.workloadSelector?.labels ?? {};
      if (Object.keys(selector).length === 0) continue;
      let found = false;
      for (const pod of pods) {
        const namespace = pod.metadata.namespace ?? "";
        if (namespace !== r.meta.namespace || !selects(selector, pod.metadata.labels)) continue;
        found = true;
        const key = `${namespace}/${pod.metadata.name}`;
        const entry = sidecarsOfPod.get(key) ?? { namespace, name: pod.metadata.name, sidecars: [] };
        entry.sidecars.push(r);
        sidecarsOfPod.set(key, entry);
      }
      if (!found) {
        ctx.report(MESSAGES.ReferencedResourceNotFound, meshOrigin(r), "selector", selectorString(selector));
      }
      yield;
    }
    for (const { namespace, name, sidecars } of sidecarsOfPod.values()) {
      if (sidecars.length < 2) continue;
      const names = sidecars.map((s) => s.meta.name);
      for (const s of sidecars) {
        ctx.report(MESSAGES.ConflictingSidecarWorkloadSelectors, meshOrigin(s), names, namespace, name);
      }
    }
  },
};
