/**
 * The mesh networks of one snapshot (`--networksConfig`) as answers: which network an endpoint or a proxy is
 * on, and through which gateways other networks reach it.
 *
 * An endpoint's network is its own label (pod, else namespace: `topology.mesh.io/network`), else the network
 * whose `fromRegistry` names its cluster, else the one whose `fromCidr` holds its address. A proxy's is its
 * `NETWORK` metadata (`MESH_META_NETWORK`), else the network of its cluster (`CLUSTER_ID` metadata, else the
 * server's own cluster), else the CIDR holding its first address. Empty means the default network, which
 * reaches and is reached by every network directly.
 *
 * A network's gateways are its fixed `address` gateways (IP literals only: EDS cannot carry names) and, for
 * each `registryServiceName`, the external addresses of that service in the registries of the network's
 * clusters (those its `fromRegistry` entries name), each with the gateway's port, as the reference builds them.
 *
 * @module
 */
import { BlockList } from "node:net";
import { isIp, isIPv4 } from "@mesh/shared/config/validation/ip";
import type { MeshNetworks } from "@mesh/shared/config/mesh/mesh_networks";
import type { Endpoint } from "../model/endpoint.ts";
import type { Proxy } from "../model/proxy.ts";
import type { Service } from "../model/service.ts";

/** One address through which another network reaches a network's endpoints. */
export interface NetworkGatewayAddress {
  /** IP address of the gateway. */
  readonly address: string;
  /** Port of the gateway (the networks file's `port`). */
  readonly port: number;
  /** Cluster whose gateway service gave the address; empty for a fixed `address`. */
  readonly clusterId: string;
  /** `region/zone/subzone` of the gateway, when the networks file names it. */
  readonly locality: string;
}

/** A registry the index asks for gateway services: its cluster and a hostname lookup. */
export interface GatewayServiceSource {
  /** Cluster id of the registry. */
  readonly clusterId: string;
  /** The service of that hostname in the registry, if any. */
  getService(hostname: string): Service | undefined;
}

/** Answers the network questions of one snapshot; immutable. */
export class MeshNetworkIndex {
  /** Cluster id → network whose `fromRegistry` names it (the first network by name, when several do). */
  readonly #byCluster = new Map<string, string>();
  readonly #cidrs: { network: string; list: BlockList }[] = [];
  readonly #gateways = new Map<string, readonly NetworkGatewayAddress[]>();
  /** Stable text of the networks and their gateways: what split-horizon EDS depends on besides endpoints. */
  readonly fingerprint: string;
  /** True when the networks file defines a network: only then does EDS split endpoints by network. */
  readonly active: boolean;

  /**
   * @param networks the mesh networks in effect.
   * @param registries the registries gateway services are looked up in.
   * @param localClusterId the server's own cluster (`CLUSTER_ID`), for proxies that name none.
   */
  constructor(
    networks: MeshNetworks,
    registries: readonly GatewayServiceSource[],
    readonly localClusterId: string,
  ) {
    const names = Object.keys(networks.networks).sort();
    for (const name of names) {
      const list = new BlockList();
      let cidrs = 0;
      for (const ep of networks.networks[name].endpoints) {
        if (ep.fromRegistry !== undefined && !this.#byCluster.has(ep.fromRegistry)) {
          this.#byCluster.set(ep.fromRegistry, name);
        }
        if (ep.fromCidr !== undefined) {
          const [base, bits] = ep.fromCidr.split("/");
          const family = isIPv4(base) ? "ipv4" : "ipv6";
          list.addSubnet(base, bits === undefined ? (family === "ipv4" ? 32 : 128) : Number(bits), family);
          cidrs++;
        }
      }
      if (cidrs > 0) this.#cidrs.push({ network: name, list });
    }
    for (const name of names) {
      const clusters = [...this.#byCluster].filter(([, n]) => n === name).map(([c]) => c);
      const out: NetworkGatewayAddress[] = [];
      for (const gw of networks.networks[name].gateways) {
        const locality = gw.locality ?? "";
        if (gw.address !== undefined) {
          if (isIp(gw.address)) out.push({ address: gw.address, port: gw.port, clusterId: "", locality });
          continue;
        }
        for (const registry of registries) {
          if (!clusters.includes(registry.clusterId)) continue;
          const service = registry.getService(gw.registryServiceName ?? "");
          for (const address of service?.externalAddresses ?? []) {
            if (isIp(address)) {
              out.push({ address, port: gw.port, clusterId: registry.clusterId, locality });
            }
          }
        }
      }
      if (out.length > 0) this.#gateways.set(name, Object.freeze(out));
    }
    this.active = names.length > 0;
    this.fingerprint = JSON.stringify([names.map((n) => [n, networks.networks[n]]), [...this.#gateways]]);
    Object.freeze(this);
  }

  /** Every network with gateways, and its gateways. */
  allGateways(): ReadonlyMap<string, readonly NetworkGatewayAddress[]> {
    return this.#gateways;
  }

  /** The gateways of `network`; none when it has none. */
  gateways(network: string): readonly NetworkGatewayAddress[] {
    return this.#gateways.get(network) ?? [];
  }

  /** The network of a cluster's registry (`fromRegistry`), or empty. */
  networkOfCluster(clusterId: string): string {
    return this.#byCluster.get(clusterId) ?? "";
  }

  /** The network whose `fromCidr` holds `address`, or empty. */
  networkOfAddress(address: string): string {
    if (!isIp(address)) return "";
    const family = isIPv4(address) ? "ipv4" : "ipv6";
    return this.#cidrs.find((c) => c.list.check(address, family))?.network ?? "";
  }

  /** The network of an endpoint: its label, else its cluster's, else its address's. */
  networkOfEndpoint(endpoint: Endpoint): string {
    return endpoint.network || this.networkOfCluster(endpoint.locality.clusterId) ||
      this.networkOfAddress(endpoint.address);
  }

  /** The cluster a proxy runs in: its `CLUSTER_ID` metadata, else the server's own. */
  clusterOfProxy(proxy: Proxy): string {
    return proxy.metadata.clusterId || this.localClusterId;
  }

  /** The network of a proxy: its `NETWORK` metadata, else its cluster's, else its first address's. */
  networkOfProxy(proxy: Proxy): string {
    return proxy.metadata.network || this.networkOfCluster(this.clusterOfProxy(proxy)) ||
      this.networkOfAddress(proxy.ipAddresses[0] ?? "");
  }
}

/** True when traffic goes between the two networks directly: equal, or either is the default network. */
export function sameNetwork(a: string, b: string): boolean {
  return a === "" || b === "" || a === b;
}
