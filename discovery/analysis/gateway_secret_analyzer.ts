import { type AnalysisContext, type Analyzer, meshOrigin } from "./analyzer.ts";
import { MESSAGES } from "./analysis_message.ts";
import { selectorString, selects, shortOrFullName } from "./analysis_util.ts";

interface GatewaySpec {
  readonly selector?: Readonly<Record<string, string>>;
  readonly servers?: readonly { readonly tls?: { readonly credentialName?: string } }[];
}

/**
 * Gateways whose selector matches no pod with a namespace (IST0101 `selector`), and `credentialName`s with no
 * Secret in the namespace of the first pod selected (IST0101 `credentialName`).
 */
export const gatewaySecretAnalyzer: Analyzer = {
  name: "gateway.SecretAnalyzer",
  description: "Checks a gateway's referenced secrets for correctness",
  requiresOrchestrator: true,
  *analyze(ctx: AnalysisContext) {
    const pods = ctx.orch("Pod");
    const secrets = new Set(
      ctx.orch("Secret").map((s) => `${s.metadata.namespace ?? ""}/${s.metadata.name}`),
    );
    for (const r of ctx.mesh<GatewaySpec>("Gateway")) {
      const selector = r.spec.selector ?? {};
      const namespace = pods.find((p) => selects(selector, p.metadata.labels))?.metadata.namespace ?? "";
      if (namespace === "") {
        ctx.report(MESSAGES.ReferencedResourceNotFound, meshOrigin(r), "selector", selectorString(selector));
      } else {
        for (const server of r.spec.servers ?? []) {
          const name = server.tls?.credentialName ?? "";
          if (name === "" || secrets.has(shortOrFullName(namespace, name))) continue;
          ctx.report(MESSAGES.ReferencedResourceNotFound, meshOrigin(r), "credentialName", name);
        }
      }
      yield;
    }
  },
};
