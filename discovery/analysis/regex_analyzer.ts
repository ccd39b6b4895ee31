import { checkRe2 } from "@mesh/shared/config/validation/regex";
import { type AnalysisContext, type Analyzer, meshOrigin } from "./analyzer.ts";
import { type MessageOrigin, MESSAGES } from "./analysis_message.ts";
import type { HttpMatch, StringMatch, VirtualServiceSpec } from "./virtual_service_routes.ts";

function check(
  ctx: AnalysisContext,
  origin: MessageOrigin,
  match: StringMatch | undefined,
  where: string,
): void {
  const regex = match?.regex ?? "";
  if (regex === "") return;
  const problem = checkRe2(regex);
  if (problem !== undefined) ctx.report(MESSAGES.InvalidRegexp, origin, where, regex, problem);
}

/** `regex` string matches of HTTP routes and CORS origins that RE2 does not compile (IST0122). */
export const regexAnalyzer: Analyzer = {
  name: "virtualservice.RegexAnalyzer",
  description: "Checks regex syntax",
  requiresOrchestrator: false,
  *analyze(ctx: AnalysisContext) {
    for (const r of ctx.mesh<VirtualServiceSpec>("VirtualService")) {
      const origin = meshOrigin(r);
      for (const route of r.spec.http ?? []) {
        for (const m of (route.match ?? []) as HttpMatch[]) {
          check(ctx, origin, m.uri, "uri");
          check(ctx, origin, m.scheme, "scheme");
          check(ctx, origin, m.method, "method");
          check(ctx, origin, m.authority, "authority");
          for (const h of Object.values(m.headers ?? {})) check(ctx, origin, h, "headers");
          for (const q of Object.values(m.queryParams ?? {})) check(ctx, origin, q, "queryParams");
        }
        for (const o of route.corsPolicy?.allowOrigins ?? []) {
          check(ctx, origin, o, "corsPolicy.allowOrigins");
        }
        // A route's regexes are a step: one VirtualService may carry thousands, each compiled by RE2.
        yield;
      }
      yield;
    }
  },
};
