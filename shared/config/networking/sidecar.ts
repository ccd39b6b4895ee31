import { childPath, type ValidationReport } from "../validation/report.ts";
import { arrayAt, objectAt } from "../validation/fields.ts";
import type { ValidationContext } from "../validation/context.ts";
import { checkFqdn } from "../validation/hosts.ts";
import { workloadSelectorAt } from "../validation/selector.ts";
import { enumAt, isSet, optionalObjectAt } from "../validation/values.ts";
import { type Destination, destinationAt } from "./destination.ts";
import {
  egressListenerAt,
  ingressListenerAt,
  type IstioEgressListener,
  type IstioIngressListener,
} from "./sidecar_listeners.ts";

/** What a sidecar does with traffic to destinations outside its egress listeners' hosts. */
export interface OutboundTrafficPolicy {
  /**
   * `REGISTRY_ONLY` blocks hosts outside the registry; `ALLOW_ANY` passes them through (default: the mesh's
   * mode).
   */
  readonly mode?: "REGISTRY_ONLY" | "ALLOW_ANY";
  /** Where unknown traffic goes in ALLOW_ANY mode instead of passing through. */
  readonly egressProxy?: Destination;
}

/** Narrows the ports and hosts a workload's proxy listens on and can reach. */
export interface SidecarSpec {
  /** Selects the workloads in the namespace; none: all workloads without a more specific Sidecar. */
  readonly workloadSelector?: { readonly labels?: Readonly<Record<string, string>> };
  /** Listeners for inbound traffic; none means the proxy's default inbound capture. */
  readonly ingress?: readonly IstioIngressListener[];
  /** Listeners for outbound traffic and the hosts each reaches; at least one. */
  readonly egress: readonly IstioEgressListener[];
  /** What to do with traffic to hosts no egress listener imports. */
  readonly outboundTrafficPolicy?: OutboundTrafficPolicy;
}

function outboundTrafficPolicyAt(report: ValidationReport, path: string, value: unknown): void {
  const obj = optionalObjectAt(report, path, value, ["mode", "egressProxy"]);
  if (obj === undefined) return;
  const mode = enumAt(report, childPath(path, "mode"), obj.mode, ["REGISTRY_ONLY", "ALLOW_ANY"]) ??
    "REGISTRY_ONLY";
  if (!isSet(obj.egressProxy)) return;
  const proxyPath = childPath(path, "egressProxy");
  if (mode !== "ALLOW_ANY") report.error(proxyPath, "egressProxy may only be set with mode ALLOW_ANY");
  const proxy = destinationAt(report, proxyPath, obj.egressProxy);
  if (proxy === undefined) return;
  if (typeof proxy.host === "string" && proxy.host !== "") {
    const problem = checkFqdn(proxy.host);
    if (problem) report.error(childPath(proxyPath, "host"), problem);
  }
  if (!isSet(proxy.port)) report.error(childPath(proxyPath, "port"), "egressProxy needs a port");
}

/** Validates a Sidecar spec as Istio 1.9 does. */
export function validateSidecar(spec: unknown, report: ValidationReport, _ctx: ValidationContext): void {
  const obj = objectAt(report, "spec", spec, [
    "workloadSelector",
    "ingress",
    "egress",
    "outboundTrafficPolicy",
  ]);
  if (obj === undefined) return;
  workloadSelectorAt(report, "spec.workloadSelector", obj.workloadSelector, {
    field: "labels",
    requireLabels: true,
  });

  const ingressPorts = new Set<number>();
  for (const [i, raw] of arrayAt(report, "spec.ingress", obj.ingress).entries()) {
    const at = childPath("spec.ingress", i);
    const port = ingressListenerAt(report, at, raw);
    if (port === undefined) continue;
    if (ingressPorts.has(port)) {
      report.error(childPath(at, "port"), `ingress port ${port} is used by an earlier listener`);
    }
    ingressPorts.add(port);
  }

  const egress = arrayAt(report, "spec.egress", obj.egress);
  if (egress.length === 0) report.error("spec.egress", "a sidecar needs at least one egress listener");
  const egressPorts = new Set<number>();
  const sockets = new Set<string>();
  let catchAll = -1;
  for (const [i, raw] of egress.entries()) {
    const at = childPath("spec.egress", i);
    const key = egressListenerAt(report, at, raw);
    if (key === undefined) continue;
    if ("catchAll" in key) {
      if (catchAll >= 0) report.error(at, "egress can have only one listener without port");
      else if (i !== egress.length - 1) {
        report.error(at, "the egress listener without port must be the last listener");
      }
      catchAll = i;
    } else if ("port" in key) {
      if (egressPorts.has(key.port)) {
        report.error(childPath(at, "port"), `egress port ${key.port} is used by an earlier listener`);
      }
      egressPorts.add(key.port);
    } else {
      if (sockets.has(key.unix)) {
        report.error(childPath(at, "bind"), `unix socket "${key.unix}" is used by an earlier listener`);
      }
      sockets.add(key.unix);
    }
  }
  outboundTrafficPolicyAt(report, "spec.outboundTrafficPolicy", obj.outboundTrafficPolicy);
}
