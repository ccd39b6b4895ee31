import type { Resource } from "@mesh/shared/config/resource";
import { type AnalysisContext, type Analyzer, meshOrigin } from "./analyzer.ts";
import { listedItems, MESSAGES } from "./analysis_message.ts";
import { fullName, isExportToAll, MESH_GATEWAY, scopedFqdn } from "./analysis_util.ts";
import type { VirtualServiceSpec } from "./virtual_service_routes.ts";

/** VirtualServices bound to the mesh gateway that share a host within their export scope (IST0109 on each). */
export const conflictingMeshGatewayHostsAnalyzer: Analyzer = {
  name: "virtualservice.ConflictingMeshGatewayHostsAnalyzer",
  description: "Checks if multiple virtual services associated with the mesh gateway have conflicting hosts",
  requiresOrchestrator: false,
  *analyze(ctx: AnalysisContext) {
    const byHost = new Map<string, Resource<VirtualServiceSpec>[]>();
    for (const r of ctx.mesh<VirtualServiceSpec>("VirtualService")) {
      const gateways = r.spec.gateways ?? [];
      if (gateways.length > 0 && !gateways.includes(MESH_GATEWAY)) continue;
      const scope = isExportToAll(r.spec.exportTo) ? "*" : r.meta.namespace;
      for (const host of r.spec.hosts ?? []) {
        const key = scopedFqdn(scope, r.meta.namespace, host);
        const list = byHost.get(key) ?? [];
        list.push(r);
        byHost.set(key, list);
      }
      yield;
    }
    for (const [host, list] of byHost) {
      if (list.length < 2) continue;
      const names = listedItems(list.map((r) => fullName(r.meta.namespace, r.meta.name)), ",");
      for (const r of list) {
        ctx.report(MESSAGES.ConflictingMeshGatewayVirtualServiceHosts, meshOrigin(r), names, host);
      }
      yield;
    }
  },
};
