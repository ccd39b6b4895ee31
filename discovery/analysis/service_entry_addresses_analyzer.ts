import { type AnalysisContext, type Analyzer, meshOrigin } from "./analyzer.ts";
import { MESSAGES } from "./analysis_message.ts";

interface ServiceEntrySpec {
  readonly addresses?: readonly string[];
  readonly ports?: readonly { readonly protocol?: string }[];
}

/** ServiceEntries without addresses: one IST0134 per port whose protocol is unset or TCP. */
export const serviceEntryAddressesAnalyzer: Analyzer = {
  name: "serviceentry.Analyzer",
  description: "Checks the validity of ServiceEntry",
  requiresOrchestrator: false,
  *analyze(ctx: AnalysisContext) {
    for (const r of ctx.mesh<ServiceEntrySpec>("ServiceEntry")) {
      // The reference tests for a nil list: an empty `addresses: []` decodes to nil too.
      if ((r.spec.addresses ?? []).length > 0) continue;
      for (const port of r.spec.ports ?? []) {
        const protocol = port.protocol ?? "";
        if (protocol === "" || protocol === "TCP") {
          ctx.report(MESSAGES.ServiceEntryAddressesRequired, meshOrigin(r));
        }
      }
      yield;
    }
  },
};
