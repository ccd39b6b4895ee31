/**
 * The name table (NDS) a sidecar's agent answers DNS from: every host of the proxy's Sidecar scope with its
 * addresses. A service with an address gives that address; a headless orchestrator service gives its pods'
 * addresses in the proxy's cluster; a ServiceEntry without one gives an address auto-allocated from
 * 240.240.0.0/16 when the proxy captures DNS with `DNS_AUTO_ALLOCATE` (Istio 1.9's rule). Wildcard hosts are
 * left out: DNS cannot answer for them. Served under our type URL and Istio's, same bytes.
 *
 * Allocation differs from Istio 1.9 on purpose: Istio numbers ServiceEntries in order, so deleting one renumbers
 * every later one (its own TODO); here a host's address is the hash of its name, probed forward on a collision
 * in hostname order, so an address only moves when its own host, or one colliding with it, comes or goes.
 *
 * @module
 */
import { isIP } from "node:net";
import {
  encodeNameTableAny,
  ISTIO_NAME_TABLE_TYPE_URL,
  NAME_TABLE_TYPE_URL,
  type NameInfo,
  type NameTable,
} from "@mesh/proto/name_table";
import type { Proxy } from "../model/proxy.ts";
import { addressesInCluster, type Service } from "../model/service.ts";
import type { PushContext } from "../push/push_context.ts";
import { derivedTable } from "../push/derived_memo.ts";
import { stableJson } from "./fingerprint.ts";
import { cacheKey, DEFAULT_GENERATOR, type GeneratorRegistry, type XdsGenerator } from "./generator.ts";

/** The one resource's name in a name table response. */
export const NAME_TABLE_RESOURCE = "name-table";

/** How many addresses 240.240.0.0/16 offers: third octet 0 to 255, fourth 1 to 254. */
const AUTO_ADDRESSES = 256 * 254;

/** True for a node metadata flag the agent sets (`"true"`, or a JSON true). */
function flag(proxy: Proxy, key: string): boolean {
  const value = proxy.metadata.raw[key];
  return value === true || (typeof value === "string" && value.toLowerCase() === "true");
}

/** A ServiceEntry host that gets an auto-allocated address when it has none (Istio 1.9's conditions). */
function allocatable(service: Service): boolean {
  return service.attributes.serviceRegistry === "External" && !service.hostname.includes("*") &&
    service.resolution !== "Passthrough" && plainIps(service.addresses).length === 0;
}

function plainIps(addresses: readonly string[]): string[] {
  return addresses.filter((a) => isIP(a) !== 0 && a !== "0.0.0.0" && a !== "::");
}

/** FNV-1a of the hostname: the slot a host tries first. */
function slotOf(hostname: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < hostname.length; i++) {
    hash ^= hostname.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % AUTO_ADDRESSES;
}

/**
 * Auto-allocated addresses of every allocatable host in `services`, by hostname: the hash slot, else the next
 * free one, hosts taken in hostname order so every server computes the same table. Hosts past the range's
 * size get none.
 */
export function allocateAddresses(services: readonly Service[]): ReadonlyMap<string, string> {
  const hosts = [...new Set(services.filter(allocatable).map((s) => s.hostname))].sort();
  const taken = new Set<number>();
  const out = new Map<string, string>();
  for (const host of hosts.slice(0, AUTO_ADDRESSES)) {
    let slot = slotOf(host);
    while (taken.has(slot)) slot = (slot + 1) % AUTO_ADDRESSES;
    taken.add(slot);
    out.set(host, `240.240.${Math.floor(slot / 254)}.${(slot % 254) + 1}`);
  }
  return out;
}

/** Builds the name table of `proxy`; `allocated` is the snapshot's auto-allocation, used with the flags. */
export function buildNameTable(
  proxy: Proxy,
  push: PushContext,
  allocated: ReadonlyMap<string, string>,
  registryName: (registry: string) => string = (r) => r,
): NameTable {
  const autoAllocate = flag(proxy, "DNS_CAPTURE") && flag(proxy, "DNS_AUTO_ALLOCATE");
  const cluster = proxy.metadata.clusterId;
  const table: Record<string, NameInfo> = {};
  for (const service of push.servicesVisibleTo(proxy)) {
    if (service.hostname.includes("*")) continue;
    const own = cluster === undefined ? undefined : addressesInCluster(service, cluster);
    let ips = plainIps(own ?? service.addresses);
    const registry = service.attributes.serviceRegistry;
    if (ips.length === 0 && registry === "Orchestrator" && service.resolution === "Passthrough") {
      ips = headlessPods(push, service, cluster);
    } else if (ips.length === 0 && autoAllocate) {
      const address = allocated.get(service.hostname);
      if (address !== undefined) ips = [address];
    }
    if (ips.length === 0) continue;
    table[service.hostname] = {
      ips,
      registry: registryName(registry),
      shortname: registry === "Orchestrator" ? service.attributes.name : "",
      namespace: registry === "Orchestrator" ? service.attributes.namespace : "",
    };
  }
  return table;
}

/** The pods of a headless service on its first port, in the proxy's cluster. */
function headlessPods(push: PushContext, service: Service, cluster: string | undefined): string[] {
  const first = service.ports[0];
  if (first === undefined) return [];
  const shards = push.endpointIndex.shards(service.hostname, service.namespace);
  const out = new Set<string>();
  for (const [shardCluster, instances] of shards.byCluster) {
    if (cluster !== undefined && shardCluster !== cluster) continue;
    for (const instance of instances) {
      if (instance.servicePort.port === first.port && isIP(instance.endpoint.address) !== 0) {
        out.add(instance.endpoint.address);
      }
    }
  }
  return [...out].sort();
}

/** Auto-allocated addresses of a snapshot's services, by host. */
const ALLOCATIONS = derivedTable<PushContext, undefined, ReadonlyMap<string, string>>("nds.allocations");

/**
 * The name table generator of `typeUrl`. Its auto-allocation is computed once per snapshot, shared by both
 * type URLs, and held by the snapshot's memo. Istio's type URL names the orchestrator registry `Kubernetes`, as Istio's agent expects.
 */
export function nameTableGenerator(typeUrl: string): XdsGenerator<PushContext> {
  const registryName = typeUrl === ISTIO_NAME_TABLE_TYPE_URL
    ? (r: string) => r === "Orchestrator" ? "Kubernetes" : r
    : undefined;
  return {
    typeUrl,
    generate(proxy, push) {
      if (proxy.type !== "sidecar") return [];
      const allocated = push.derived.get(
        ALLOCATIONS,
        push.configSnapshot,
        undefined,
        () => allocateAddresses(push.services()),
      );
      const table = buildNameTable(proxy, push, allocated, registryName);
      // The table is its own cache key: equal tables share their bytes, and a changed one never meets a stale entry.
      return [{
        name: NAME_TABLE_RESOURCE,
        key: cacheKey(typeUrl, [stableJson(table)], []),
        build: () => table as Record<string, unknown>,
        encode: () => encodeNameTableAny(typeUrl, table),
      }];
    },
  };
}

/** Registers the name table generators (ours and Istio's type URL) under the default flavour. */
export function registerNameTableGenerators(
  registry: GeneratorRegistry<PushContext>,
): GeneratorRegistry<PushContext> {
  for (const typeUrl of [NAME_TABLE_TYPE_URL, ISTIO_NAME_TABLE_TYPE_URL]) {
    registry.register(nameTableGenerator(typeUrl), DEFAULT_GENERATOR);
  }
  return registry;
}
