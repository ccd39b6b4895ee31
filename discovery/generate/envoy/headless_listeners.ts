/**
 * `DISCOVERY_ENABLE_HEADLESS_SERVICE_POD_LISTENERS`: a headless service (passthrough, no cluster IP) has no
 * address to listen on, so instead of one wildcard listener per TCP port, which a second such service on the
 * same port would conflict with, a sidecar gets an outbound listener per endpoint IP, as the reference's
 * `buildSidecarOutboundListeners` does for StatefulSets. HTTP ports stay on the wildcard listener, whose routes
 * reach each pod through the original-destination cluster.
 *
 * @module
 */
import { isIP } from "node:net";
import type { ServiceInstance } from "../../model/endpoint.ts";
import type { Proxy } from "../../model/proxy.ts";
import type { Service, ServicePort } from "../../model/service.ts";
import type { PushContext } from "../../push/push_context.ts";

/**
 * The addresses `proxy`'s outbound listeners of `port` of `service`, which has no address in the proxy's
 * cluster, bind to: undefined when
 * the per-pod listeners do not apply (the wildcard listener does); else each endpoint IP of the port but the
 * proxy's own (its inbound listener takes that traffic), sorted. An orchestrator service without endpoints, or a
 * ServiceEntry whose selector has not matched yet, gets none; a plain ServiceEntry without endpoints falls back
 * to the wildcard listener, as in the reference.
 */
export function headlessListenerAddresses(
  proxy: Proxy,
  push: PushContext,
  service: Service,
  port: ServicePort,
): string[] | undefined {
  if (!push.headlessPodListeners || service.resolution !== "Passthrough") return undefined;
  const shards = push.endpointIndex.shards(service.hostname, service.namespace);
  const instances = [...shards.byCluster.values()].flat().filter((i) => i.servicePort.port === port.port);
  if (
    instances.length === 0 && service.attributes.serviceRegistry !== "Orchestrator" &&
    service.attributes.labelSelectors === undefined
  ) {
    return undefined;
  }
  const own = proxy.ipAddresses[0];
  const addresses = new Set<string>();
  for (const { endpoint } of instances) {
    // ServiceEntry endpoints of a NONE service may be hostnames; only IPs can be listened on.
    if (isIP(endpoint.address) === 0 || endpoint.address === own) continue;
    addresses.add(endpoint.address);
  }
  return [...addresses].sort();
}

/**
 * The proxy's own address when some headless service has an endpoint there: the per-pod listeners it gets
 * leave that address out, so it is part of what its LDS reads (its shape); undefined otherwise.
 * `atProxy` are the endpoints at the proxy's addresses, which the caller looks up once for its inbound ports too.
 */
export function headlessOwnAddress(
  proxy: Proxy,
  push: PushContext,
  atProxy: readonly ServiceInstance[],
): string | undefined {
  const own = proxy.ipAddresses[0];
  if (!push.headlessPodListeners || own === undefined) return undefined;
  const headless = atProxy.some(({ endpoint, service }) =>
    endpoint.address === own && service.resolution === "Passthrough"
  );
  return headless ? own : undefined;
}
