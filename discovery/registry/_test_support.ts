import type { Resource } from "@mesh/shared/config/resource";
import { NETWORKING_GROUP } from "@mesh/shared/config/kinds";
import { MemoryConfigStore } from "../config/memory_config_store.ts";
import { parseProxy, type Proxy } from "../model/proxy.ts";
import type { Endpoint } from "../model/endpoint.ts";
import type { Service } from "../model/service.ts";

/** A networking resource for tests. */
export function networking<S>(
  kind: string,
  namespace: string,
  name: string,
  spec: S,
  meta: { labels?: Record<string, string>; creationTimestamp?: string } = {},
): Resource<S> {
  return {
    gvk: { group: NETWORKING_GROUP, version: "v1alpha3", kind },
    meta: { name, namespace, ...meta },
    spec,
  };
}

/** A config store whose creation timestamps advance one second per write, so creation order is the write order. */
export function orderedStore(): MemoryConfigStore {
  let t = Date.parse("2024-01-01T00:00:00Z");
  return new MemoryConfigStore({ now: () => new Date(t += 1000) });
}

/** A sidecar proxy at `ip` in `namespace`, with optional labels. */
export function sidecar(ip: string, namespace: string, labels: Record<string, string> = {}): Proxy {
  return parseProxy({
    id: `sidecar~${ip}~pod-${ip.replaceAll(/[.:]/g, "-")}.${namespace}~${namespace}.svc.cluster.local`,
    metadata: { LABELS: labels },
  });
}

/** A minimal mesh-internal service for registry tests. */
export function service(hostname: string, namespace: string, extra: Partial<Service> = {}): Service {
  return {
    hostname,
    namespace,
    ports: [{ name: "http", port: 80, protocol: "HTTP" }],
    addresses: [],
    resolution: "ClientSideLB",
    exportTo: ["*"],
    labels: {},
    meshExternal: false,
    serviceAccounts: [],
    attributes: { serviceRegistry: "Mock", clusterId: "c1", name: hostname.split(".")[0], namespace },
    ...extra,
  };
}

/** An endpoint of port "http" for registry tests. */
export function endpoint(address: string, extra: Partial<Endpoint> = {}): Endpoint {
  return {
    address,
    endpointPort: 8080,
    servicePortName: "http",
    labels: {},
    locality: { label: "", clusterId: "" },
    network: "",
    weight: 0,
    tlsMode: "disabled",
    serviceAccount: "",
    namespace: "",
    workloadName: "",
    healthy: true,
    ...extra,
  };
}
