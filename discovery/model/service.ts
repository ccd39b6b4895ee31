import type { Protocol } from "@mesh/shared/config/validation/ports";
import { exportedTo } from "./visibility.ts";

/** A port protocol, or "Unsupported" when the port declares none (the proxy sniffs it). */
export type ServiceProtocol = Protocol | "Unsupported";

/**
 * How a proxy reaches the endpoints of a service: load balancing over known endpoints (`ClientSideLB`,
 * ServiceEntry STATIC and orchestrator services), DNS (`DNSLB`, ServiceEntry DNS), or the original
 * destination address (`Passthrough`, ServiceEntry NONE).
 */
export type ServiceResolution = "ClientSideLB" | "DNSLB" | "Passthrough";

/** Which registry implementation a service or registry comes from. */
export type ProviderId = "Orchestrator" | "Mock" | "External";

/** One port of a service. */
export interface ServicePort {
  /** Port name, unique within the service; may be empty for single-port orchestrator services. */
  readonly name: string;
  /** The service port number (1 to 65535). */
  readonly port: number;
  /** Protocol the port declares, or `Unsupported` when it declares none. */
  readonly protocol: ServiceProtocol;
}

/** Where a service came from and what selects its workloads. */
export interface ServiceAttributes {
  /** Which registry implementation reported the service. */
  readonly serviceRegistry: ProviderId;
  /** Cluster id of the registry that reported the service. */
  readonly clusterId: string;
  /** Short name: the ServiceEntry's or orchestrator service's name. */
  readonly name: string;
  /** Namespace of the ServiceEntry or orchestrator service. */
  readonly namespace: string;
  /** Labels a workload must carry to be an endpoint of the service (ServiceEntry workloadSelector). */
  readonly labelSelectors?: Readonly<Record<string, string>>;
}

/**
 * A service as the mesh sees it: a hostname with ports, addresses and visibility. Immutable; a change
 * produces a new Service value.
 */
export interface Service {
  /** Fully qualified hostname, or a wildcard host such as `*.example.com` (ServiceEntry). */
  readonly hostname: string;
  /** Namespace the service is defined in. */
  readonly namespace: string;
  /** Ports of the service, each with a unique name. */
  readonly ports: readonly ServicePort[];
  /** Virtual IPs or CIDR blocks; empty when the service has none (wildcard listeners apply). */
  readonly addresses: readonly string[];
  /** How proxies reach the endpoints. */
  readonly resolution: ServiceResolution;
  /** Namespaces the service is visible in: namespace names, `*` (all) or `~` (none); never `.`. */
  readonly exportTo: readonly string[];
  /** Labels of the defining resource. */
  readonly labels: Readonly<Record<string, string>>;
  /** True for services outside the mesh: no sidecars at the endpoints, so no mesh mTLS. */
  readonly meshExternal: boolean;
  /** Identities the endpoints may present (ServiceEntry subjectAltNames). */
  readonly serviceAccounts: readonly string[];
  /** Registry, cluster and selector facts of the service. */
  readonly attributes: ServiceAttributes;
  /**
   * Addresses of the service in each cluster that has it, by cluster id; set by the aggregate registry when
   * it merges one hostname from several registries.
   */
  readonly clusterAddresses?: Readonly<Record<string, readonly string[]>>;
  /**
   * Addresses that reach the service from outside its cluster (an orchestrator Service's load-balancer ingress
   * and external IPs), for network gateways named by `registryServiceName`.
   */
  readonly externalAddresses?: readonly string[];
  /** When the defining resource was created, for precedence of duplicate hostnames (oldest wins). */
  readonly creationTime?: string;
}

/**
 * True for a headless service: reached at its endpoints' own addresses (passthrough) and with no address of
 * its own, like an orchestrator Service with `clusterIP: None` or a ServiceEntry with resolution NONE.
 */
export function isHeadlessPassthrough(service: Service): boolean {
  return service.resolution === "Passthrough" && service.addresses.every((a) => a === "0.0.0.0");
}

/**
 * The addresses of `service` in the cluster `clusterId`, or undefined when that cluster has none of its own.
 * Only the record's own keys count: a proxy names its cluster (`CLUSTER_ID`), and one naming `constructor` must
 * not read a property every object inherits.
 */
export function addressesInCluster(service: Service, clusterId: string): readonly string[] | undefined {
  const byCluster = service.clusterAddresses;
  return byCluster !== undefined && Object.hasOwn(byCluster, clusterId) ? byCluster[clusterId] : undefined;
}

/** The port of `service` with this number, if any. */
export function servicePortByNumber(service: Service, port: number): ServicePort | undefined {
  return service.ports.find((p) => p.port === port);
}

/** The port of `service` with this name, if any. */
export function servicePortByName(service: Service, name: string): ServicePort | undefined {
  return service.ports.find((p) => p.name === name);
}

/** True when the service can be seen from `namespace` according to its exportTo list. */
export function serviceVisibleFrom(service: Service, namespace: string): boolean {
  return exportedTo(service.exportTo, namespace);
}
