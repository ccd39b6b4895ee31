import { hostsMatch } from "../model/host_match.ts";
import { type AnalysisContext, type Analyzer, meshOrigin } from "./analyzer.ts";
import { MESSAGES } from "./analysis_message.ts";
import { fullName, MESH_GATEWAY, shortOrFullName } from "./analysis_util.ts";
import type { VirtualServiceSpec } from "./virtual_service_routes.ts";

interface GatewaySpec {
  readonly servers?: readonly { readonly hosts?: readonly string[] }[];
}

/** Gateways a VirtualService names that do not exist (IST0101) or serve none of its hosts (IST0132). */
export const gatewayReferenceAnalyzer: Analyzer = {
  name: "virtualservice.GatewayAnalyzer",
  description: "Checks the gateways associated with each virtual service",
  requiresOrchestrator: false,
  *analyze(ctx: AnalysisContext) {
    const gatewayHosts = new Map<string, string[]>();
    for (const g of ctx.mesh<GatewaySpec>("Gateway")) {
      gatewayHosts.set(
        `${g.meta.namespace}/${g.meta.name}`,
        (g.spec.servers ?? []).flatMap((s) => s.hosts ?? []),
      );
    }
    yield;
    for (const r of ctx.mesh<VirtualServiceSpec>("VirtualService")) {
      const hosts = r.spec.hosts ?? [];
      for (const gateway of r.spec.gateways ?? []) {
        if (gateway === MESH_GATEWAY) continue;
        const name = shortOrFullName(r.meta.namespace, gateway);
        const served = gatewayHosts.get(name);
        if (served === undefined) {
          ctx.report(MESSAGES.ReferencedResourceNotFound, meshOrigin(r), "gateway", gateway);
        }
        if (!(served ?? []).some((gh) => hosts.some((vh) => hostsMatch(gh, vh)))) {
          ctx.report(
            MESSAGES.VirtualServiceHostNotFoundInGateway,
            meshOrigin(r),
            hosts,
            fullName(r.meta.namespace, r.meta.name),
            gateway.includes("/") ? gateway : fullName(r.meta.namespace, gateway),
          );
        }
      }
      yield;
    }
  },
};
