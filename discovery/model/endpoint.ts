import type { Service, ServicePort } from "./service.ts";

/** TLS a proxy may use toward an endpoint: `mesh` when it runs a sidecar that terminates mesh mTLS. */
export type EndpointTlsMode = "mesh" | "disabled";

/** Label keys that mark an endpoint's TLS mode; Istio's key is accepted so Istio configs work unchanged. */
export const TLS_MODE_LABELS: readonly string[] = ["security.mesh.io/tlsMode", "security.istio.io/tlsMode"];

/** Where an endpoint runs: `region/zone/subzone` plus the cluster that reported it. */
export interface EndpointLocality {
  /** `region/zone/subzone` (any suffix may be missing), or empty. */
  readonly label: string;
  /** Cluster id of the registry that reported the endpoint. */
  readonly clusterId: string;
}

/**
 * One network endpoint of one service port (Istio's IstioEndpoint). Immutable.
 */
export interface Endpoint {
  /** IP address, DNS name (DNS resolution) or `unix://` path. */
  readonly address: string;
  /** Port on the endpoint that receives the service port's traffic; 0 for unix sockets. */
  readonly endpointPort: number;
  /** Name of the service port this endpoint serves. */
  readonly servicePortName: string;
  /** Labels of the workload behind the endpoint. */
  readonly labels: Readonly<Record<string, string>>;
  /** Where the endpoint runs. */
  readonly locality: EndpointLocality;
  /** Network the endpoint is on, for multi-network routing; empty for the default network. */
  readonly network: string;
  /** Load-balancing weight; 0 means "not set" (proxies use 1). */
  readonly weight: number;
  /** Whether the endpoint accepts mesh mutual TLS, from its `tlsMode` label. */
  readonly tlsMode: EndpointTlsMode;
  /** Service account name of the workload (not a SPIFFE URI); empty when unknown. */
  readonly serviceAccount: string;
  /** Namespace of the workload behind the endpoint. */
  readonly namespace: string;
  /** Name of the workload (WorkloadEntry or pod) behind the endpoint, for debugging. */
  readonly workloadName: string;
  /** False sends the endpoint to proxies as unhealthy, so they route around it. */
  readonly healthy: boolean;
}

/** An endpoint together with the service and port it serves (Istio's ServiceInstance). */
export interface ServiceInstance {
  /** The service the endpoint belongs to. */
  readonly service: Service;
  /** The service port the endpoint serves. */
  readonly servicePort: ServicePort;
  /** The endpoint itself. */
  readonly endpoint: Endpoint;
}

/** Reads the TLS mode from workload labels; endpoints without the label get `disabled`. */
export function tlsModeFromLabels(labels: Readonly<Record<string, string>>): EndpointTlsMode {
  for (const key of TLS_MODE_LABELS) {
    const value = labels[key];
    if (value === "istio" || value === "mesh") return "mesh";
    if (value !== undefined) return "disabled";
  }
  return "disabled";
}
