import { type AnalysisContext, type Analyzer, meshOrigin, orchOrigin } from "./analyzer.ts";
import { MESSAGES } from "./analysis_message.ts";
import { asRecord, asString } from "./analysis_util.ts";
import type { VirtualServiceSpec } from "./virtual_service_routes.ts";

/** Custom resource kinds the reference removed, by group. */
const REMOVED_CRDS: readonly { group: string; kind: string }[] = [
  { group: "rbac.istio.io", kind: "ClusterRbacConfig" },
  { group: "rbac.istio.io", kind: "RbacConfig" },
  { group: "rbac.istio.io", kind: "ServiceRole" },
  { group: "rbac.istio.io", kind: "ServiceRoleBinding" },
];

interface SidecarSpec {
  readonly outboundTrafficPolicy?: { readonly egressProxy?: unknown };
}

/**
 * Deprecated fields (`http[].fault.delay.percent`, Sidecar `outboundTrafficPolicy.egressProxy`) and the
 * definitions of removed custom resource kinds, when orchestrator objects are read (IST0002).
 */
export const deprecationAnalyzer: Analyzer = {
  name: "deprecation.DeprecationAnalyzer",
  description: "Checks for deprecated Mesh types and fields",
  requiresOrchestrator: false,
  *analyze(ctx: AnalysisContext) {
    for (const r of ctx.mesh<VirtualServiceSpec>("VirtualService")) {
      for (const route of r.spec.http ?? []) {
        if ((route.fault?.delay?.percent ?? 0) > 0) {
          ctx.report(
            MESSAGES.Deprecated,
            meshOrigin(r),
            "HTTPRoute.fault.delay.percent is deprecated; use HTTPRoute.fault.delay.percentage",
          );
        }
      }
      yield;
    }
    for (const r of ctx.mesh<SidecarSpec>("Sidecar")) {
      const egress = r.spec.outboundTrafficPolicy?.egressProxy;
      if (egress !== undefined && egress !== null) {
        ctx.report(MESSAGES.Deprecated, meshOrigin(r), "OutboundTrafficPolicy.EgressProxy ignored");
      }
      yield;
    }
    for (const crd of ctx.orch("CustomResourceDefinition")) {
      const spec = asRecord(crd.spec);
      const kind = asString(asRecord(spec.names).kind);
      const removed = REMOVED_CRDS.find((d) => d.group === spec.group && d.kind === kind);
      if (removed) {
        ctx.report(
          MESSAGES.Deprecated,
          orchOrigin(crd),
          `Custom resource type ${removed.group} ${removed.kind} is removed`,
        );
      }
    }
  },
};
