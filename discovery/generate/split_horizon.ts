/**
 * Split-horizon EDS (the reference's `EndpointsByNetworkFilter`), for Envoy and proxyless gRPC: a proxy gets the endpoints on its own
 * network as they are, and in place of the endpoints of another network that network's gateways, each weighted
 * by how many endpoints it stands for. A network without a gateway contributes nothing, and neither do
 * endpoints without mesh mTLS: the gateway routes by the SNI of mesh mTLS (`AUTO_PASSTHROUGH`).
 *
 * Weights are normalised as the reference does: every weight is multiplied by the product of the gateway
 * counts of all networks, so a network's share, split evenly among its gateways, stays a whole number.
 *
 * @module
 */
import type { ServiceInstance } from "../model/endpoint.ts";
import type { Proxy } from "../model/proxy.ts";
import type { PushContext } from "../push/push_context.ts";
import { type MeshNetworkIndex, sameNetwork } from "../push/network_index.ts";

/** The network a proxy's endpoints are split for, and the networks; absent when no network is defined. */
export interface NetworkSplit {
  /** The proxy's network. */
  readonly network: string;
  readonly networks: MeshNetworkIndex;
}

/**
 * How `proxy`'s EDS is split in `push`, for Envoy and proxyless gRPC alike (the reference filters both); absent
 * while the networks file defines no network.
 */
export function networkSplit(proxy: Proxy, push: PushContext): NetworkSplit | undefined {
  const networks = push.networks;
  return networks.active ? { network: networks.networkOfProxy(proxy), networks } : undefined;
}

/** What of a split goes into EDS shapes and cache keys: the proxy's network and the networks' fingerprint. */
export function splitKey(split: NetworkSplit | undefined): { network?: string; networks?: string } {
  return split === undefined ? {} : { network: split.network, networks: split.networks.fingerprint };
}

/**
 * The instances `proxyNetwork` sends to: its network's (and the default network's) with their weights scaled,
 * and one synthetic instance per gateway of each other network, in the locality of the endpoints it replaces.
 */
export function splitHorizon(
  instances: readonly ServiceInstance[],
  proxyNetwork: string,
  networks: MeshNetworkIndex,
): ServiceInstance[] {
  let multiples = 1;
  for (const gateways of networks.allGateways().values()) multiples *= gateways.length;
  const out: ServiceInstance[] = [];
  // `locality label|network` → endpoints behind the network's gateways, and one of them as a template.
  const remote = new Map<string, { network: string; count: number; template: ServiceInstance }>();
  for (const instance of instances) {
    const { endpoint } = instance;
    const network = networks.networkOfEndpoint(endpoint);
    if (sameNetwork(network, proxyNetwork)) {
      const weight = (endpoint.weight > 0 ? endpoint.weight : 1) * multiples;
      out.push(weight === endpoint.weight ? instance : { ...instance, endpoint: { ...endpoint, weight } });
      continue;
    }
    if (networks.gateways(network).length === 0 || endpoint.tlsMode !== "mesh") continue;
    const key = `${endpoint.locality.label}|${network}`;
    const seen = remote.get(key);
    if (seen) seen.count++;
    else remote.set(key, { network, count: 1, template: instance });
  }
  for (const { network, count, template } of remote.values()) {
    const gateways = networks.gateways(network);
    const weight = count * (multiples / gateways.length);
    for (const gateway of gateways) {
      out.push({
        ...template,
        endpoint: {
          address: gateway.address,
          endpointPort: gateway.port,
          servicePortName: template.endpoint.servicePortName,
          labels: {},
          locality: { label: template.endpoint.locality.label, clusterId: gateway.clusterId },
          network,
          weight,
          tlsMode: "mesh",
          serviceAccount: "",
          namespace: template.endpoint.namespace,
          workloadName: "",
          healthy: true,
        },
      });
    }
  }
  return out;
}
