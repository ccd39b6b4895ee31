/**
 * A service port's endpoints as Envoy `LocalityLbEndpoints`, the shape gRPC's EDS client needs: grouped by
 * locality, every locality with a load-balancing weight (gRPC drops localities without one), IP literals
 * only (gRPC does not resolve hostnames in EDS), no address twice (gRPC rejects duplicates).
 *
 * @module
 */
import { isIp } from "@mesh/shared/config/validation/ip";
import type { ServiceInstance } from "../model/endpoint.ts";
import { selectorMatches } from "../model/labels.ts";
import type { EnvoyObject } from "./route_match.ts";

/** An Envoy Locality from a `region/zone/subzone` label; missing parts are left out. */
export function localityOf(label: string): EnvoyObject {
  const [region, zone, subZone] = label.split("/");
  return {
    ...(region ? { region } : {}),
    ...(zone ? { zone } : {}),
    ...(subZone ? { sub_zone: subZone } : {}),
  };
}

/**
 * The instances an endpoint cluster sends to: those of service port `port` whose endpoint is an IP address and
 * carries the subset's labels (all of them when `subsetLabels` is undefined), the first of duplicate
 * address:port pairs kept.
 */
export function selectInstances(
  instances: Iterable<ServiceInstance>,
  port: number,
  subsetLabels: Readonly<Record<string, string>> | undefined,
): ServiceInstance[] {
  const seen = new Set<string>();
  const out: ServiceInstance[] = [];
  for (const instance of instances) {
    const { endpoint } = instance;
    if (instance.servicePort.port !== port || !isIp(endpoint.address)) continue;
    if (!selectorMatches(subsetLabels, endpoint.labels)) continue;
    const key = `${endpoint.address}|${endpoint.endpointPort}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(instance);
  }
  return out;
}

/**
 * Groups instances by locality, localities and endpoints sorted so equal inputs give equal bytes. An endpoint
 * weighs its weight (1 when unset); a locality weighs the sum of its endpoints' weights. `extra` adds fields to
 * each `LbEndpoint` (Envoy sidecars read the endpoint's TLS mode from its metadata).
 */
export function localityLbEndpoints(
  instances: readonly ServiceInstance[],
  extra: (instance: ServiceInstance) => EnvoyObject = () => ({}),
): EnvoyObject[] {
  const byLocality = new Map<string, ServiceInstance[]>();
  for (const instance of instances) {
    const label = instance.endpoint.locality.label;
    const list = byLocality.get(label);
    if (list) list.push(instance);
    else byLocality.set(label, [instance]);
  }
  return [...byLocality.keys()].sort().map((label) => {
    const members = byLocality.get(label)!.slice().sort((a, b) =>
      a.endpoint.address === b.endpoint.address
        ? a.endpoint.endpointPort - b.endpoint.endpointPort
        : a.endpoint.address < b.endpoint.address
        ? -1
        : 1
    );
    let total = 0;
    const lbEndpoints = members.map((instance) => {
      const { endpoint } = instance;
      const weight = endpoint.weight > 0 ? endpoint.weight : 1;
      total += weight;
      return {
        endpoint: {
          address: { socket_address: { address: endpoint.address, port_value: endpoint.endpointPort } },
        },
        health_status: endpoint.healthy ? "HEALTHY" : "UNHEALTHY",
        load_balancing_weight: { value: weight },
        ...extra(instance),
      };
    });
    return {
      locality: localityOf(label),
      lb_endpoints: lbEndpoints,
      load_balancing_weight: { value: total },
    };
  });
}
