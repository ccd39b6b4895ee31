import { type AnalysisContext, type Analyzer, meshOrigin } from "./analyzer.ts";
import { type MessageOrigin, MESSAGES } from "./analysis_message.ts";
import type { Route, VirtualServiceSpec } from "./virtual_service_routes.ts";

/**
 * A match as a canonical text: keys sorted, and values a Go JSON encoding leaves out (empty, false, zero)
 * dropped, so two matches the reference marshals alike compare equal.
 */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = value.map(canonical);
    return items.length === 0 ? undefined : items;
  }
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = canonical((value as Record<string, unknown>)[key]);
      if (v !== undefined) out[key] = v;
    }
    return Object.keys(out).length === 0 ? undefined : out;
  }
  return value === "" || value === false || value === 0 || value === null ? undefined : value;
}

function matchKey(match: unknown, http: boolean): string {
  const m = http && match !== null && typeof match === "object" ? { ...match, name: undefined } : match;
  return JSON.stringify(canonical(m) ?? {});
}

function ruleName(route: Route, index: number, http: boolean): string {
  return http && route.name ? JSON.stringify(route.name) : `#${index}`;
}

function matchName(match: unknown, index: number, http: boolean): string {
  const name = http ? (match as { name?: unknown } | null)?.name : undefined;
  return typeof name === "string" && name !== "" ? JSON.stringify(name) : `#${index}`;
}

function analyzeRules(
  ctx: AnalysisContext,
  origin: MessageOrigin,
  routes: readonly Route[],
  http: boolean,
): void {
  const seen = new Map<string, number>();
  let emptySeen = false;
  routes.forEach((route, n) => {
    const matches = route.match ?? [];
    if (matches.length === 0) {
      if (emptySeen) {
        ctx.report(
          MESSAGES.VirtualServiceUnreachableRule,
          origin,
          ruleName(route, n, http),
          "only the last rule can have no matches",
        );
      }
      emptySeen = true;
      return;
    }
    let duplicates = 0;
    matches.forEach((match, m) => {
      const key = matchKey(match, http);
      const dup = seen.get(key);
      if (dup === undefined) {
        seen.set(key, n);
        return;
      }
      ctx.report(
        MESSAGES.VirtualServiceIneffectiveMatch,
        origin,
        ruleName(route, n, http),
        matchName(match, m, http),
        ruleName(routes[dup], dup, http),
      );
      duplicates++;
    });
    if (duplicates === matches.length) {
      ctx.report(
        MESSAGES.VirtualServiceUnreachableRule,
        origin,
        ruleName(route, n, http),
        "all matches used by prior rules",
      );
    }
  });
}

/** Rules no request can reach and matches an earlier rule already takes (IST0130, IST0131). */
export const matchesAnalyzer: Analyzer = {
  name: "virtualservice.MatchesAnalyzer",
  description: "Checks virtual services for unreachable and duplicate matches",
  requiresOrchestrator: false,
  *analyze(ctx: AnalysisContext) {
    for (const r of ctx.mesh<VirtualServiceSpec>("VirtualService")) {
      const origin = meshOrigin(r);
      analyzeRules(ctx, origin, r.spec.http ?? [], true);
      analyzeRules(ctx, origin, r.spec.tcp ?? [], false);
      analyzeRules(ctx, origin, r.spec.tls ?? [], false);
      yield;
    }
  },
};
