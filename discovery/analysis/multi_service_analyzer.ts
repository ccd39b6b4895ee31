import { type AnalysisContext, type Analyzer, orchOrigin } from "./analyzer.ts";
import { MESSAGES } from "./analysis_message.ts";
import { fullName, workloadInMesh } from "./analysis_util.ts";
import { SelectorIndex } from "./selector_index.ts";
import { deploymentTemplate, namespaceLabels, servicePorts, serviceSelector } from "./orch_specs.ts";

/**
 * Deployments in the mesh that no Service selects (IST0117), or that Services expose on one port with two
 * protocols (IST0116). Services of every namespace are matched, as in the reference.
 */
export const multiServiceAnalyzer: Analyzer = {
  name: "deployment.MultiServiceAnalyzer",
  description: "Checks association between services and pods",
  requiresOrchestrator: true,
  *analyze(ctx: AnalysisContext) {
    const namespaces = namespaceLabels(ctx.orch("Namespace"));
    const services = new SelectorIndex(ctx.orch("Service"), serviceSelector);
    for (const d of ctx.orch("Deployment")) {
      const template = deploymentTemplate(d);
      const nsLabels = namespaces.get(d.metadata.namespace ?? "");
      if (!workloadInMesh(template.annotations, template.containers, nsLabels)) continue;
      const matching = services.matching(template.labels);
      if (matching.length === 0) {
        ctx.report(MESSAGES.DeploymentRequiresServiceAssociated, orchOrigin(d));
        continue;
      }
      // port → protocol → names of the Services exposing it.
      const ports = new Map<number, Map<string, string[]>>();
      for (const svc of matching) {
        const name = fullName(svc.metadata.namespace ?? "", svc.metadata.name);
        for (const port of servicePorts(svc)) {
          const protocols = ports.get(port.port ?? 0) ?? new Map<string, string[]>();
          const protocol = port.protocol || "TCP";
          protocols.set(protocol, [...(protocols.get(protocol) ?? []), name]);
          ports.set(port.port ?? 0, protocols);
        }
      }
      for (const [port, protocols] of ports) {
        if (protocols.size < 2) continue;
        ctx.report(
          MESSAGES.DeploymentAssociatedToMultipleServices,
          orchOrigin(d),
          d.metadata.name,
          port,
          [...protocols.values()].flat(),
        );
      }
      yield;
    }
  },
};
