import { type AnalysisContext, type Analyzer, meshOrigin } from "./analyzer.ts";
import { MESSAGES } from "./analysis_message.ts";
import { resourceNameFromHost } from "./analysis_util.ts";
import { mirrorDestinations, routeDestinations, type VirtualServiceSpec } from "./virtual_service_routes.ts";

interface DestinationRuleSpec {
  readonly host?: string;
  readonly subsets?: readonly { readonly name?: string }[];
}

/** Route and mirror subsets that no DestinationRule of the destination's host defines (IST0101). */
export const destinationRuleSubsetAnalyzer: Analyzer = {
  name: "virtualservice.DestinationRuleAnalyzer",
  description: "Checks the destination rules associated with each virtual service",
  requiresOrchestrator: false,
  *analyze(ctx: AnalysisContext) {
    const known = new Set<string>();
    for (const r of ctx.mesh<DestinationRuleSpec>("DestinationRule")) {
      const host = resourceNameFromHost(r.meta.namespace, r.spec.host ?? "");
      for (const subset of r.spec.subsets ?? []) known.add(`${host}+${subset.name ?? ""}`);
      yield;
    }
    for (const r of ctx.mesh<VirtualServiceSpec>("VirtualService")) {
      const ns = r.meta.namespace;
      for (const { rule, destination } of [...routeDestinations(r.spec), ...mirrorDestinations(r.spec)]) {
        const subset = destination.subset ?? "";
        if (subset === "") continue;
        if (known.has(`${resourceNameFromHost(ns, destination.host ?? "")}+${subset}`)) continue;
        const what = rule === "http.mirror"
          ? "mirror+subset in destinationrule"
          : "host+subset in destinationrule";
        ctx.report(
          MESSAGES.ReferencedResourceNotFound,
          meshOrigin(r),
          what,
          `${destination.host ?? ""}+${subset}`,
        );
      }
      yield;
    }
  },
};
