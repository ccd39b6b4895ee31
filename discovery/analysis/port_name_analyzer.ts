import { parseProtocol } from "@mesh/shared/config/validation/ports";
import { type AnalysisContext, type Analyzer, orchOrigin } from "./analyzer.ts";
import { MESSAGES } from "./analysis_message.ts";
import { isSystemNamespace } from "./analysis_util.ts";
import { type OrchServicePort, servicePorts } from "./orch_specs.ts";

/** Ports that default to TCP when their name names no protocol (SMTP, DNS, MySQL, MongoDB). */
const WELL_KNOWN_PORTS = new Set([25, 53, 3306, 27017]);

/**
 * Whether the reference can tell a Service port's protocol: UDP, else `appProtocol` (when set) or the name,
 * `grpc-web` or the part before the first `-` naming a protocol, else a well-known port.
 */
export function portProtocolKnown(port: OrchServicePort): boolean {
  if (port.protocol === "UDP") return true;
  const name = port.appProtocol ?? port.name ?? "";
  if (name.toLowerCase().startsWith("grpc-web")) return true;
  const dash = name.indexOf("-");
  if (parseProtocol(dash >= 0 ? name.slice(0, dash) : name) !== undefined) return true;
  return WELL_KNOWN_PORTS.has(port.port ?? 0);
}

/** The port's `targetPort` as the orchestrator prints it. */
function targetPortText(port: OrchServicePort): string {
  return port.targetPort === undefined ? "0" : String(port.targetPort);
}

/**
 * Service ports whose protocol cannot be told from their name or `appProtocol` (IST0118). Services of system
 * namespaces and of the control plane (label `mesh`, or `release: mesh`) are skipped.
 */
export const portNameAnalyzer: Analyzer = {
  name: "service.PortNameAnalyzer",
  description: "Checks the port names associated with each service",
  requiresOrchestrator: true,
  *analyze(ctx: AnalysisContext) {
    for (const svc of ctx.orch("Service")) {
      if (isSystemNamespace(svc.metadata.namespace ?? "")) continue;
      const labels = svc.metadata.labels ?? {};
      if ("mesh" in labels || labels.release === "mesh") continue;
      for (const port of servicePorts(svc)) {
        if (portProtocolKnown(port)) continue;
        ctx.report(
          MESSAGES.PortNameIsNotUnderNamingConvention,
          orchOrigin(svc),
          port.name ?? "",
          port.port ?? 0,
          targetPortText(port),
        );
      }
      yield;
    }
  },
};
