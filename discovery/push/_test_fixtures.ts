import type { Resource } from "../../shared/config/resource.ts";
import { silentLogger } from "../../shared/log/logger.ts";
import { defaultMeshConfig } from "../../shared/config/mesh/mesh_config.ts";
import type { MemoryConfigStore } from "../config/memory_config_store.ts";
import { parseProxy, type Proxy } from "../model/proxy.ts";
import { AggregateRegistry } from "../registry/aggregate_registry.ts";
import { ServiceEntryRegistry } from "../registry/serviceentry/service_entry_registry.ts";
import { networking, orderedStore } from "../registry/_test_support.ts";
import {
  buildPushContext,
  type PushContext,
  type PushContextInputs,
  type PushMeshConfig,
} from "./push_context.ts";

export { networking };

/** A store plus a ServiceEntry registry behind an aggregate: what a discovery server runs on, in memory. */
export interface World {
  readonly store: MemoryConfigStore;
  readonly registry: AggregateRegistry;
  readonly serviceEntries: ServiceEntryRegistry;
  /** Applies resources in order (older first). */
  apply(...resources: Resource[]): void;
  /** Builds a snapshot of the current state. */
  push(overrides?: Partial<PushContextInputs>): PushContext;
}

/** The mesh defaults with `rootNamespace: mesh-system`. */
export const MESH: PushMeshConfig = { ...defaultMeshConfig(), rootNamespace: "mesh-system" };

/** A fresh world. */
export function world(): World {
  const store = orderedStore();
  const serviceEntries = new ServiceEntryRegistry(store, {
    clusterId: "c1",
    appNamespaces: [],
    defaultExportTo: () => MESH.defaultServiceExportTo,
    log: silentLogger,
  });
  serviceEntries.start();
  const registry = new AggregateRegistry("c1");
  registry.addRegistry(serviceEntries);
  return {
    store,
    registry,
    serviceEntries,
    apply: (...resources) => resources.forEach((r) => store.apply(r)),
    push: (overrides = {}) =>
      buildPushContext({ store, services: registry, mesh: MESH, domain: "cluster.local", ...overrides }),
  };
}

/** A sidecar proxy in `namespace` with labels. */
export function proxyIn(namespace: string, labels: Record<string, string> = {}, type = "sidecar"): Proxy {
  return parseProxy({
    id: `${type}~10.9.9.9~pod.${namespace}~${namespace}.svc.cluster.local`,
    metadata: { LABELS: labels },
  });
}

/** A STATIC mesh-internal ServiceEntry for `host` with one endpoint, exported as given. */
export function serviceEntry(
  namespace: string,
  name: string,
  host: string,
  exportTo?: string[],
  address = "10.0.0.1",
) {
  return networking("ServiceEntry", namespace, name, {
    hosts: [host],
    ports: [{ number: 80, name: "http", protocol: "HTTP" }],
    location: "MESH_INTERNAL",
    resolution: "STATIC",
    endpoints: [{ address }],
    ...(exportTo ? { exportTo } : {}),
  });
}
