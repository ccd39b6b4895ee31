import type { Proxy } from "../model/proxy.ts";
import type { Service } from "../model/service.ts";
import type { PushContext } from "../push/push_context.ts";
import { outboundClusterName } from "../push/service_index.ts";
import { grpcServices, serviceByHostname } from "./grpc_target.ts";

/** One outbound cluster a request names, resolved to its service, port and subset ("" for the whole service). */
export interface WantedCluster {
  /** The cluster name, `outbound|port|subset|host`. */
  readonly name: string;
  /** The visible service the cluster belongs to. */
  readonly service: Service;
  /** The service port. */
  readonly port: number;
  /** The DestinationRule subset, or "" for the service-wide cluster. */
  readonly subset: string;
}

/**
 * The clusters a CDS or EDS request names among the services visible to the proxy that `include` accepts;
 * for a wildcard request (no names), every service port and subset. Unknown or foreign names are skipped.
 */
export function wantedClusters(
  names: readonly string[],
  proxy: Proxy,
  push: PushContext,
  include: (service: Service) => boolean = () => true,
): WantedCluster[] {
  const reachable = grpcServices(push.derived, push.servicesVisibleTo(proxy));
  if (names.length === 0) {
    return reachable.filter(include).flatMap((service) => {
      const subsets = push.destinationRule(proxy, service)?.spec.subsets ?? [];
      return service.ports.flatMap((port) => [
        { name: outboundClusterName(service.hostname, port.port), service, port: port.port, subset: "" },
        ...subsets.map((s) => ({
          name: outboundClusterName(service.hostname, port.port, s.name),
          service,
          port: port.port,
          subset: s.name,
        })),
      ]);
    });
  }
  // Named clusters are looked up by hostname, never by a pass over the scope: an endpoint push asks this of
  // every proxy, and a scope of a thousand services filtered per proxy was most of such a push's work.
  const out: WantedCluster[] = [];
  for (const name of new Set(names)) {
    const parts = push.clusterNames.parse(name);
    if (parts === undefined || parts.direction !== "outbound") continue;
    const service = serviceByHostname(push.derived, reachable, parts.hostname);
    if (service === undefined || !include(service)) continue;
    if (!service.ports.some((p) => p.port === parts.port)) continue;
    out.push({ name, service, port: parts.port, subset: parts.subset });
  }
  return out;
}
