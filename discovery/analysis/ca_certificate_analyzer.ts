import { type AnalysisContext, type Analyzer, meshOrigin } from "./analyzer.ts";
import { MESSAGES } from "./analysis_message.ts";
import { fullName } from "./analysis_util.ts";

interface Tls {
  readonly mode?: string;
  readonly caCertificates?: string;
}

interface DestinationRuleSpec {
  readonly host?: string;
  readonly trafficPolicy?: {
    readonly tls?: Tls;
    readonly portLevelSettings?: readonly {
      readonly port?: { readonly number?: number };
      readonly tls?: Tls;
    }[];
  };
}

const verifies = (tls: Tls | undefined) =>
  !(tls?.mode === "SIMPLE" || tls?.mode === "MUTUAL") || (tls.caCertificates ?? "") !== "";

/** DestinationRules with TLS mode SIMPLE or MUTUAL and no `caCertificates` (IST0128, IST0129 per port). */
export const caCertificateAnalyzer: Analyzer = {
  name: "destinationrule.CaCertificateAnalyzer",
  description: "Checks if caCertificates is set when TLS mode is SIMPLE/MUTUAL",
  requiresOrchestrator: false,
  *analyze(ctx: AnalysisContext) {
    for (const r of ctx.mesh<DestinationRuleSpec>("DestinationRule")) {
      const name = fullName(r.meta.namespace, r.meta.name);
      const policy = r.spec.trafficPolicy;
      const host = r.spec.host ?? "";
      if (!verifies(policy?.tls)) {
        ctx.report(
          MESSAGES.NoServerCertificateVerificationDestinationLevel,
          meshOrigin(r),
          name,
          r.meta.namespace,
          policy!.tls!.mode!,
          host,
        );
      }
      for (const p of policy?.portLevelSettings ?? []) {
        if (verifies(p.tls)) continue;
        ctx.report(
          MESSAGES.NoServerCertificateVerificationPortLevel,
          meshOrigin(r),
          name,
          r.meta.namespace,
          p.tls!.mode!,
          host,
          p.port?.number !== undefined ? `number:${p.port.number}` : "",
        );
      }
      yield;
    }
  },
};
