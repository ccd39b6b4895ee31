import type { Resource } from "@mesh/shared/config/resource";
import type { ServiceEntrySpec } from "@mesh/shared/config/networking/service_entry";
import type { Port } from "@mesh/shared/config/networking/port";
import type { WorkloadEntrySpec } from "@mesh/shared/config/networking/workload_entry";
import { parseProtocol } from "@mesh/shared/config/validation/ports";
import { type Endpoint, type ServiceInstance, tlsModeFromLabels } from "../../model/endpoint.ts";
import type { Service, ServicePort, ServiceResolution } from "../../model/service.ts";
import { deepFreeze } from "../../model/deep_freeze.ts";
import { normalizeExportTo } from "../../model/visibility.ts";

const RESOLUTIONS: Readonly<Record<string, ServiceResolution>> = {
  NONE: "Passthrough",
  STATIC: "ClientSideLB",
  DNS: "DNSLB",
};

/** Settings the conversion needs besides the resource. */
export interface ConvertOptions {
  readonly clusterId: string;
  /** exportTo for entries that set none (mesh `defaultServiceExportTo`); `.` means the entry's namespace. */
  readonly defaultExportTo: readonly string[];
}

/** The service port of a ServiceEntry port; an absent protocol is "Unsupported" (sniffed). */
export function convertPort(port: Port): ServicePort {
  return {
    name: port.name ?? "",
    port: port.number,
    protocol: parseProtocol(port.protocol ?? "") ?? "Unsupported",
  };
}

/**
 * The services a ServiceEntry defines: one per host, each with all of the entry's addresses (a /32 or /128
 * CIDR becomes a plain address). Hosts are used as written, as in Istio: short names are not expanded.
 */
export function convertServices(resource: Resource<ServiceEntrySpec>, options: ConvertOptions): Service[] {
  const { spec, meta } = resource;
  const exportTo = normalizeExportTo(spec.exportTo ?? options.defaultExportTo, meta.namespace);
  const addresses = (spec.addresses ?? []).map(singleHostCidr);
  const ports = (spec.ports ?? []).map(convertPort);
  return spec.hosts.map((hostname) =>
    deepFreeze(
      {
        hostname,
        namespace: meta.namespace,
        ports,
        addresses,
        resolution: RESOLUTIONS[spec.resolution ?? "NONE"] ?? "Passthrough",
        exportTo,
        labels: { ...meta.labels },
        // MESH_EXTERNAL is the API's default location.
        meshExternal: (spec.location ?? "MESH_EXTERNAL") === "MESH_EXTERNAL",
        serviceAccounts: [...(spec.subjectAltNames ?? [])],
        attributes: {
          serviceRegistry: "External",
          clusterId: options.clusterId,
          name: meta.name,
          namespace: meta.namespace,
          ...(spec.workloadSelector?.labels ? { labelSelectors: { ...spec.workloadSelector.labels } } : {}),
        },
        ...(meta.creationTimestamp ? { creationTime: meta.creationTimestamp } : {}),
      } satisfies Service,
    )
  );
}

/** What makes an endpoint from a workload entry besides its spec. */
export interface WorkloadSource {
  readonly namespace: string;
  /** Name of the WorkloadEntry, empty for a ServiceEntry's inline endpoint. */
  readonly workloadName: string;
  readonly clusterId: string;
}

/**
 * The endpoint of one service port on one workload: the port comes from the workload's `ports` by the service
 * port's name, else the service port's targetPort, else its number; unix sockets have port 0.
 */
export function convertEndpoint(workload: WorkloadEntrySpec, port: Port, source: WorkloadSource): Endpoint {
  const unix = workload.address.startsWith("unix://");
  const named = port.name !== undefined ? workload.ports?.[port.name] : undefined;
  const endpointPort = unix
    ? 0
    : named && named > 0
    ? named
    : port.targetPort && port.targetPort > 0
    ? port.targetPort
    : port.number;
  const labels = { ...workload.labels };
  return {
    address: workload.address,
    endpointPort,
    servicePortName: port.name ?? "",
    labels,
    locality: { label: workload.locality ?? "", clusterId: source.clusterId },
    network: workload.network ?? "",
    weight: workload.weight ?? 0,
    tlsMode: tlsModeFromLabels(labels),
    serviceAccount: workload.serviceAccount ?? "",
    namespace: source.namespace,
    workloadName: source.workloadName,
    healthy: true,
  };
}

/**
 * Freezes an endpoint made by {@link convertEndpoint} through: its labels and locality are its only fields
 * that are objects (and hold strings). A generic deep freeze walked every field of every endpoint, and an
 * entry with tens of thousands of endpoints converts them in one store write.
 */
export function frozenEndpoint(endpoint: Endpoint): Endpoint {
  Object.freeze(endpoint.labels);
  Object.freeze(endpoint.locality);
  return Object.freeze(endpoint);
}

/** Instances of `workload` for every service and port of the entry. */
export function workloadInstances(
  resource: Resource<ServiceEntrySpec>,
  services: readonly Service[],
  workload: WorkloadEntrySpec,
  source: WorkloadSource,
): ServiceInstance[] {
  const out: ServiceInstance[] = [];
  pushWorkloadInstances(out, resource.spec.ports ?? [], services, workload, source);
  return out;
}

/** Appends to `out` what {@link workloadInstances} returns, without arrays of its own per workload. */
function pushWorkloadInstances(
  out: ServiceInstance[],
  ports: readonly Port[],
  services: readonly Service[],
  workload: WorkloadEntrySpec,
  source: WorkloadSource,
): void {
  // An endpoint depends on the port, not the service: one frozen endpoint per port serves every host, and
  // the services (frozen when converted) are not walked again per instance.
  if (ports.length === 1 && services.length === 1) {
    const endpoint = frozenEndpoint(convertEndpoint(workload, ports[0], source));
    out.push(Object.freeze({ service: services[0], servicePort: services[0].ports[0], endpoint }));
    return;
  }
  const endpoints = ports.map((port) => frozenEndpoint(convertEndpoint(workload, port, source)));
  for (const service of services) {
    for (let i = 0; i < endpoints.length; i++) {
      out.push(Object.freeze({ service, servicePort: service.ports[i], endpoint: endpoints[i] }));
    }
  }
}

/**
 * Instances defined by the entry itself: its inline endpoints, or for DNS resolution without endpoints and
 * without a workload selector, one endpoint per host whose address is the host (resolved by the proxy).
 */
export function inlineInstances(
  resource: Resource<ServiceEntrySpec>,
  services: readonly Service[],
  clusterId: string,
): ServiceInstance[] {
  const { spec, meta } = resource;
  const source = { namespace: meta.namespace, workloadName: "", clusterId };
  if (spec.endpoints && spec.endpoints.length > 0) {
    // One list for all: an entry may list tens of thousands of endpoints, converted in one store write.
    const out: ServiceInstance[] = [];
    const ports = spec.ports ?? [];
    for (const endpoint of spec.endpoints) pushWorkloadInstances(out, ports, services, endpoint, source);
    return out;
  }
  if (spec.resolution === "DNS" && !spec.workloadSelector) {
    return services.flatMap((service) =>
      workloadInstances(resource, [service], { address: service.hostname }, source)
    );
  }
  return [];
}

function singleHostCidr(address: string): string {
  const slash = address.indexOf("/");
  if (slash < 0) return address;
  const bits = address.slice(slash + 1);
  const ip = address.slice(0, slash);
  return (ip.includes(":") ? bits === "128" : bits === "32") ? ip : address;
}
