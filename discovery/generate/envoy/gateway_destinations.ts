/**
 * The hosts a gateway's routes reach, for `DISCOVERY_FILTER_GATEWAY_CLUSTER_CONFIG`: the destinations (routes
 * of every HTTP, TLS and TCP rule, and HTTP mirrors) of the VirtualServices bound to the Gateways selecting it,
 * as the proxy's namespace sees them. Hosts are as resolved by the VirtualService index (fully qualified).
 *
 * @module
 */
import type { VirtualServiceSpec } from "@mesh/shared/config/networking/virtual_service";
import type { Proxy } from "../../model/proxy.ts";
import type { PushContext } from "../../push/push_context.ts";

/** Every destination host of a VirtualService. */
function destinationHosts(spec: VirtualServiceSpec): string[] {
  const hosts: string[] = [];
  for (const rule of spec.http ?? []) {
    for (const route of rule.route ?? []) hosts.push(route.destination.host);
    if (rule.mirror) hosts.push(rule.mirror.host);
  }
  for (const rule of [...(spec.tls ?? []), ...(spec.tcp ?? [])]) {
    for (const route of rule.route ?? []) hosts.push(route.destination.host);
  }
  return hosts;
}

/** The destination hosts of the VirtualServices bound to the Gateways that select `proxy`; empty when none do. */
export function gatewayDestinationHosts(proxy: Proxy, push: PushContext): ReadonlySet<string> {
  const hosts = new Set<string>();
  for (const gateway of push.gatewaysFor(proxy)) {
    for (const vs of push.virtualServicesFor(proxy, gateway.name)) {
      for (const host of destinationHosts(vs.resource.spec)) hosts.add(host);
    }
  }
  return hosts;
}
