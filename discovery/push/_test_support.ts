import type { Resource } from "@mesh/shared/config/resource";
import { silentLogger } from "@mesh/shared/log/logger";
import { defaultMeshConfig } from "@mesh/shared/config/mesh/mesh_config";
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

/** Every namespace's own services, each with a DestinationRule of its own: the common, shareable mesh. */
export function ordinaryMesh(): Resource[] {
  return ["a", "b", "c"].flatMap((ns) => [
    serviceEntry(ns, "svc", `svc.${ns}.svc.cluster.local`),
    networking("DestinationRule", ns, "svc", {
      host: "svc",
      trafficPolicy: { loadBalancer: { simple: "ROUND_ROBIN" } },
    }),
    networking("VirtualService", ns, "svc", {
      hosts: ["svc"],
      http: [{ route: [{ destination: { host: "svc" } }] }],
    }),
  ]);
}

/** A change to {@link ordinaryMesh} that makes some namespaces see the snapshot differently from the rest. */
export interface NamespaceViewCase {
  /** What the change is. */
  readonly what: string;
  /** Resources applied after the ordinary mesh. */
  readonly resources: readonly Resource[];
  /** The namespaces (of a, b, c and one no config names, `unnamed`) that then see it alone. */
  readonly alone: readonly string[];
}

/** Every way a namespace comes to see the snapshot alone, on top of {@link ordinaryMesh}. */
export function namespaceViewCases(): NamespaceViewCase[] {
  const cases: [string, Resource[], string[]][] = [
    ["a Sidecar in it", [networking("Sidecar", "b", "default", { egress: [{ hosts: ["./*"] }] })], ["b"]],
    [
      "a Sidecar in the root namespace (its `.` means each workload's own namespace)",
      [networking("Sidecar", MESH.rootNamespace, "default", { egress: [{ hosts: ["./*"] }] })],
      ["a", "b", "c", "unnamed"],
    ],
    ["a service exported to `.`", [serviceEntry("b", "private", "private.b.example", ["."])], ["b"]],
    ["a service exported to it by name", [serviceEntry("a", "to-c", "to-c.a.example", ["c"])], ["c"]],
    [
      "a hostname it defines as another namespace does",
      [serviceEntry("c", "dup", "svc.a.svc.cluster.local")],
      [
        "a",
        "c",
      ],
    ],
    [
      "a VirtualService exported to `.`",
      [networking("VirtualService", "b", "local", {
        hosts: ["svc.a.svc.cluster.local"],
        exportTo: ["."],
        http: [{ route: [{ destination: { host: "svc.a.svc.cluster.local" } }] }],
      })],
      ["b"],
    ],
    [
      "a route matching its `sourceNamespace`",
      [networking("VirtualService", "a", "by-source", {
        hosts: ["svc.a.svc.cluster.local"],
        http: [{
          match: [{ sourceNamespace: "c" }],
          route: [{ destination: { host: "svc.a.svc.cluster.local" } }],
        }],
      })],
      ["c"],
    ],
    [
      "its DestinationRule for another namespace's host",
      [networking("DestinationRule", "b", "for-a", { host: "svc.a.svc.cluster.local" })],
      ["b"],
    ],
    [
      "its wildcard DestinationRule",
      [networking("DestinationRule", "c", "all", { host: "*.cluster.local" })],
      ["c"],
    ],
    [
      "its DestinationRule exported to `.` only",
      [networking("DestinationRule", "a", "mine", { host: "other.a.svc.cluster.local", exportTo: ["."] })],
      ["a"],
    ],
    [
      "a DestinationRule exported to it by name",
      [networking("DestinationRule", "a", "to-b", { host: "svc.a.svc.cluster.local", exportTo: ["b"] })],
      ["a", "b"],
    ],
  ];
  return cases.map(([what, resources, alone]) => ({ what, resources, alone }));
}
