import { type KindInfo, KINDS } from "@mesh/shared/config/kinds";
import { formatIssue, ValidationReport } from "@mesh/shared/config/validation/report";
import { type AnalysisContext, type Analyzer, meshOrigin } from "./analyzer.ts";
import { MESSAGES } from "./analysis_message.ts";

function schemaAnalyzer(info: KindInfo): Analyzer {
  return {
    name: `schema.ValidationAnalyzer.${info.kind}`,
    description: `Runs schema validation as an analyzer on '${info.kind}' resources`,
    requiresOrchestrator: false,
    *analyze(ctx: AnalysisContext) {
      for (const r of ctx.mesh(info.kind)) {
        const report = new ValidationReport();
        info.validate(r.spec, report, { namespace: r.meta.namespace, name: r.meta.name });
        for (const issue of report.errors) {
          ctx.report(MESSAGES.SchemaValidationError, meshOrigin(r), formatIssue(issue));
        }
        for (const issue of report.warnings) {
          ctx.report(MESSAGES.SchemaWarning, meshOrigin(r), formatIssue(issue));
        }
        yield;
      }
    },
  };
}

/**
 * The kinds' own validation as analyzers, one per mesh kind (IST0106 per error, IST0133 per warning). Sources
 * refuse invalid documents before they reach the store, so what these report there is mostly the warnings of
 * resources that were accepted.
 */
export function schemaValidationAnalyzers(): Analyzer[] {
  return KINDS.map(schemaAnalyzer);
}
