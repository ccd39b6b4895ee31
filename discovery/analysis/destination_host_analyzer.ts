import { type AnalysisContext, type Analyzer, meshOrigin } from "./analyzer.ts";
import { type MessageOrigin, MESSAGES } from "./analysis_message.ts";
import { EXPORT_TO_ANNOTATION, isExportToAll, scopedFqdn, splitScopedFqdn } from "./analysis_util.ts";
import { servicePorts } from "./orch_specs.ts";
import {
  mirrorDestinations,
  routeDestinations,
  type RuleDestination,
  type VirtualServiceSpec,
} from "./virtual_service_routes.ts";

interface ServiceEntrySpec {
  readonly hosts?: readonly string[];
  readonly exportTo?: readonly string[];
  readonly ports?: readonly { readonly number?: number }[];
}

/** Fills `out` with the port numbers of each visible host by scoped FQDN (`scope/host`): ServiceEntries', then Services'. */
function* hostPorts(ctx: AnalysisContext, out: Map<string, number[]>): Generator<void> {
  for (const r of ctx.mesh<ServiceEntrySpec>("ServiceEntry")) {
    const scope = isExportToAll(r.spec.exportTo) ? "*" : r.meta.namespace;
    const ports = (r.spec.ports ?? []).map((p) => p.number ?? 0);
    for (const host of r.spec.hosts ?? []) out.set(scopedFqdn(scope, r.meta.namespace, host), ports);
    yield;
  }
  for (const svc of ctx.orch("Service")) {
    const ns = svc.metadata.namespace ?? "";
    const scope = svc.metadata.annotations?.[EXPORT_TO_ANNOTATION] ?? "*";
    out.set(scopedFqdn(scope, ns, svc.metadata.name), servicePorts(svc).map((p) => p.port ?? 0));
    yield;
  }
}

/** The ports of the host a destination names, seen from `namespace`; undefined when nothing declares it. */
function lookup(hosts: Map<string, number[]>, namespace: string, host: string): number[] | undefined {
  const found = hosts.get(scopedFqdn(namespace, namespace, host)) ??
    hosts.get(scopedFqdn("*", namespace, host));
  if (found) return found;
  const bare = host.startsWith("*") ? host.slice(1) : host;
  for (const [scoped, ports] of hosts) {
    const [scope, declared] = splitScopedFqdn(scoped);
    if (!declared.startsWith("*") || (scope !== "*" && scope !== namespace)) continue;
    if (bare.endsWith(declared.slice(1))) return ports;
  }
  return undefined;
}

function checkPorts(ctx: AnalysisContext, origin: MessageOrigin, d: RuleDestination, ports: number[]): void {
  const host = d.destination.host ?? "";
  const port = d.destination.port;
  if (port === undefined || port === null) {
    if (ports.length > 1) {
      ctx.report(MESSAGES.VirtualServiceDestinationPortSelectorRequired, origin, host, ports);
    }
    return;
  }
  const number = port.number ?? 0;
  if (!ports.includes(number)) {
    ctx.report(MESSAGES.ReferencedResourceNotFound, origin, "host:port", `${host}:${number}`);
  }
}

/**
 * Route and mirror destinations whose host no Service or ServiceEntry visible from the VirtualService's
 * namespace declares (IST0101), whose port it does not have (IST0101 `host:port`), or that give no port to a
 * host with several (IST0112).
 */
export const destinationHostAnalyzer: Analyzer = {
  name: "virtualservice.DestinationHostAnalyzer",
  description: "Checks the destination hosts associated with each virtual service",
  requiresOrchestrator: true,
  *analyze(ctx: AnalysisContext) {
    const hosts = new Map<string, number[]>();
    yield* hostPorts(ctx, hosts);
    for (const r of ctx.mesh<VirtualServiceSpec>("VirtualService")) {
      const origin = meshOrigin(r);
      for (const d of [...routeDestinations(r.spec), ...mirrorDestinations(r.spec)]) {
        const host = d.destination.host ?? "";
        const ports = lookup(hosts, r.meta.namespace, host);
        if (ports === undefined) {
          ctx.report(
            MESSAGES.ReferencedResourceNotFound,
            origin,
            d.rule === "http.mirror" ? "mirror host" : "host",
            host,
          );
        } else {
          checkPorts(ctx, origin, d, ports);
        }
      }
      yield;
    }
  },
};
