import { type AnalysisContext, type Analyzer, meshOrigin } from "./analyzer.ts";
import { MESSAGES } from "./analysis_message.ts";
import { selectorString, selects } from "./analysis_util.ts";
import { servicePorts, serviceSelector } from "./orch_specs.ts";
import type { OrchObject } from "./analysis_input.ts";

/** Pods a gateway is matched against in one step of the analysis. */
const PODS_PER_STEP = 1_000;

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
    // Services select pods of their own namespace only. A gateway selector may match every pod of the cluster
    // (an empty one does), so each pod is matched against its namespace's services once, whatever the gateways.
    const servicesByNamespace = new Map<string, OrchObject[]>();
    for (const svc of ctx.orch("Service")) {
      const namespace = svc.metadata.namespace ?? "";
      const list = servicesByNamespace.get(namespace);
      if (list === undefined) servicesByNamespace.set(namespace, [svc]);
      else list.push(svc);
    }
    const tcpPortsOf = new Map<OrchObject, readonly number[]>();
    const tcpPorts = (pod: OrchObject): readonly number[] => {
      let ports = tcpPortsOf.get(pod);
      if (ports !== undefined) return ports;
      ports = (servicesByNamespace.get(pod.metadata.namespace ?? "") ?? [])
        .filter((svc) => selects(serviceSelector(svc), pod.metadata.labels))
        .flatMap((svc) => servicePorts(svc))
        .flatMap((port) => port.protocol === "TCP" && port.port !== undefined ? [port.port] : []);
      tcpPortsOf.set(pod, ports);
      return ports;
    };
    for (const r of ctx.mesh<GatewaySpec>("Gateway")) {
      const selector = r.spec.selector ?? {};
      const ports = new Set<number>();
      let matched = 0;
      for (const [i, pod] of pods.entries()) {
        if (i % PODS_PER_STEP === PODS_PER_STEP - 1) yield;
        if (!selects(selector, pod.metadata.labels)) continue;
        matched++;
        for (const port of tcpPorts(pod)) ports.add(port);
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
