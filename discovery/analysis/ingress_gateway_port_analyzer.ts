import { type AnalysisContext, type Analyzer, meshOrigin } from "./analyzer.ts";
import { MESSAGES } from "./analysis_message.ts";
import { selectorString, selects } from "./analysis_util.ts";
import { servicePorts, serviceSelector } from "./orch_specs.ts";

interface GatewaySpec {
  readonly selector?: Readonly<Record<string, string>>;
  readonly servers?: readonly { readonly port?: { readonly number?: number } }[];
}

/**
 * Gateways whose selector matches no pod (IST0101), and server ports that no Service of a selected pod's
 * namespace exposes over TCP (IST0104).
 */
export const ingressGatewayPortAnalyzer: Analyzer = {
  name: "gateway.IngressGatewayPortAnalyzer",
  description: "Checks a gateway's ports against the gateway's Kubernetes service ports",
  requiresOrchestrator: true,
  *analyze(ctx: AnalysisContext) {
    const pods = ctx.orch("Pod");
    const services = ctx.orch("Service");
    for (const r of ctx.mesh<GatewaySpec>("Gateway")) {
      const selector = r.spec.selector ?? {};
      const ports = new Set<number>();
      let matched = 0;
      for (const pod of pods) {
        if (!selects(selector, pod.metadata.labels)) continue;
        matched++;
        for (const svc of services) {
          // Services select pods of their own namespace only.
          if ((svc.metadata.namespace ?? "") !== (pod.metadata.namespace ?? "")) continue;
          if (!selects(serviceSelector(svc), pod.metadata.labels)) continue;
          for (const port of servicePorts(svc)) {
            if (port.protocol === "TCP" && port.port !== undefined) ports.add(port.port);
          }
        }
      }
      if (matched === 0) {
        ctx.report(MESSAGES.ReferencedResourceNotFound, meshOrigin(r), "selector", selectorString(selector));
      } else {
        for (const server of r.spec.servers ?? []) {
          const number = server.port?.number;
          if (server.port === undefined || server.port === null) continue;
          if (!ports.has(number ?? 0)) {
            ctx.report(
              MESSAGES.GatewayPortNotOnWorkload,
              meshOrigin(r),
              selectorString(selector),
              number ?? 0,
            );
          }
        }
      }
      yield;
    }
  },
};
