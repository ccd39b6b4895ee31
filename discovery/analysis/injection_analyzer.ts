import { type AnalysisContext, type Analyzer, orchOrigin } from "./analyzer.ts";
import { MESSAGES } from "./analysis_message.ts";
import {
  INJECTION_LABEL,
  isSystemNamespace,
  proxyImage,
  REVISION_LABEL,
  SIDECAR_INJECT_ANNOTATION,
} from "./analysis_util.ts";
import { podContainers } from "./orch_specs.ts";

/**
 * Namespaces with no injection label (IST0102) or both the legacy and the revision label (IST0123), and pods
 * of injected namespaces running without the proxy (IST0103). System namespaces are skipped.
 */
export const injectionAnalyzer: Analyzer = {
  name: "injection.Analyzer",
  description: "Checks conditions related to Mesh sidecar injection",
  requiresOrchestrator: true,
  *analyze(ctx: AnalysisContext) {
    const injected = new Set<string>();
    for (const ns of ctx.orch("Namespace")) {
      const name = ns.metadata.name;
      if (isSystemNamespace(name)) continue;
      const labels = ns.metadata.labels ?? {};
      const legacy = labels[INJECTION_LABEL] ?? "";
      const revision = REVISION_LABEL in labels;
      if (legacy === "" && !revision) {
        ctx.report(MESSAGES.NamespaceNotInjected, orchOrigin(ns), name, name);
        continue;
      }
      if (revision && legacy !== "") {
        ctx.report(MESSAGES.NamespaceMultipleInjectionLabels, orchOrigin(ns), name, name);
        continue;
      }
      if (!revision && legacy !== "enabled") continue;
      injected.add(name);
    }
    yield;
    for (const pod of ctx.orch("Pod")) {
      if (!injected.has(pod.metadata.namespace ?? "")) continue;
      if (pod.metadata.annotations?.[SIDECAR_INJECT_ANNOTATION]?.toLowerCase() === "false") continue;
      if (proxyImage(podContainers(pod)) === "") ctx.report(MESSAGES.PodMissingProxy, orchOrigin(pod));
      yield;
    }
  },
};
