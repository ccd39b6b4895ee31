/**
 * Test support: an in-memory mesh (config store, ServiceEntry registry, shared endpoint index) that builds
 * real push snapshots, gRPC proxies, and a runner that generates, encodes and decodes resources the way the
 * xDS server does.
 *
 * @module
 */
import type { Resource } from "@mesh/shared/config/resource";
import { NETWORKING_GROUP } from "@mesh/shared/config/kinds";
import { defaultMeshConfig } from "@mesh/shared/config/mesh/mesh_config";
import { silentLogger } from "@mesh/shared/log/logger";
import { Buffer } from "node:buffer";
import { decodeAny, encodeAny } from "@mesh/proto/any_codec";
import { loadEnvoySchema } from "@mesh/proto/envoy_schema";
import { MemoryConfigStore } from "../config/memory_config_store.ts";
import { parseProxy, type Proxy } from "../model/proxy.ts";
import { AggregateRegistry } from "../registry/aggregate_registry.ts";
import { ServiceEntryRegistry } from "../registry/serviceentry/service_entry_registry.ts";
import { EndpointIndex } from "../push/endpoint_index.ts";
import {
  buildPushContext,
  type PushContext,
  type PushContextInputs,
  type PushMeshConfig,
} from "../push/push_context.ts";
import { type CacheableResource, type GenerateRequest, isCacheable, type XdsGenerator } from "./generator.ts";

/** The mesh defaults with `rootNamespace: mesh-system`. */
export const MESH: PushMeshConfig = { ...defaultMeshConfig(), rootNamespace: "mesh-system" };

/** A networking resource. */
export function networking<S>(kind: string, namespace: string, name: string, spec: S): Resource<S> {
  return { gvk: { group: NETWORKING_GROUP, version: "v1beta1", kind }, meta: { name, namespace }, spec };
}

/** A store, ServiceEntry registry and endpoint index that snapshots are built from. */
export class World {
  #seconds = Date.parse("2024-01-01T00:00:00Z");
  readonly store = new MemoryConfigStore({ now: () => new Date(this.#seconds += 1000) });
  readonly registry = new AggregateRegistry("c1");
  readonly endpoints = new EndpointIndex(this.registry);
  #version = 0;

  constructor() {
    const serviceEntries = new ServiceEntryRegistry(this.store, {
      clusterId: "c1",
      appNamespaces: [],
      defaultExportTo: () => MESH.defaultServiceExportTo,
      log: silentLogger,
    });
    serviceEntries.start();
    this.registry.addRegistry(serviceEntries);
    // Keeps the shared index current, as the discovery server's change events do.
    this.registry.onEndpointEvent((e) => this.endpoints.update(e));
    this.registry.onServiceEvent((e) => this.endpoints.update(e.service));
  }

  /** Applies resources in order (older first). */
  apply(...resources: Resource[]): this {
    for (const r of resources) this.store.apply(r);
    return this;
  }

  /** Deletes a resource. */
  delete(kind: string, namespace: string, name: string): this {
    this.store.delete(kind, namespace, name);
    return this;
  }

  /** A new snapshot of the current state. */
  push(inputs: Partial<PushContextInputs> = {}): PushContext {
    return buildPushContext({
      store: this.store,
      services: this.registry,
      mesh: MESH,
      domain: "cluster.local",
      endpoints: this.endpoints,
      version: `v${++this.#version}`,
      ...inputs,
    });
  }
}

/** A proxyless gRPC client in `namespace`. */
export function grpcProxy(
  namespace = "example",
  labels: Record<string, string> = {},
  ip = "10.9.9.9",
): Proxy {
  return parseProxy({
    id: `sidecar~${ip}~client.${namespace}~${namespace}.svc.cluster.local`,
    metadata: { GENERATOR: "grpc", NAMESPACE: namespace, LABELS: labels },
  });
}

/** What a generator produced for one request, as the server would send it. */
export interface Generated {
  /** Names in generation order. */
  readonly names: string[];
  /** Decoded resources by name. */
  readonly byName: Map<string, Record<string, unknown>>;
  /** Encoded Any bytes by name. */
  readonly bytes: Map<string, Uint8Array>;
  /** Cache-aware descriptions by name. */
  readonly cacheable: Map<string, CacheableResource>;
}

/** Runs a generator, builds and encodes every resource with Envoy's schema, and decodes it back. */
export function run(
  generator: XdsGenerator<PushContext>,
  proxy: Proxy,
  push: PushContext,
  request: Partial<GenerateRequest> = {},
): Generated {
  const out: Generated = { names: [], byName: new Map(), bytes: new Map(), cacheable: new Map() };
  const full: GenerateRequest = { names: request.names ?? [], full: request.full ?? true, ...request };
  for (const resource of generator.generate(proxy, push, full)) {
    if (!isCacheable(resource)) throw new TypeError(`Resource "${resource.name}" carries no cache key`);
    const bytes = encodeAny(generator.typeUrl, resource.build());
    // A generator that assembles its own bytes must give exactly what encoding the built object gives.
    if (resource.encode !== undefined && !Buffer.from(resource.encode(loadEnvoySchema())).equals(bytes)) {
      throw new Error(`Resource "${resource.name}": encode() differs from encodeAny(build())`);
    }
    out.names.push(resource.name);
    out.bytes.set(resource.name, bytes);
    out.byName.set(resource.name, decodeAny(bytes).resource);
    out.cacheable.set(resource.name, resource);
  }
  return out;
}

/** The greeter service: a GRPC ServiceEntry port 7070 with v1 and v2 workloads in two zones. */
export function greeterResources(): Resource[] {
  return [
    networking("ServiceEntry", "example", "greeter", {
      hosts: ["greeter.example.svc.cluster.local"],
      location: "MESH_INTERNAL",
      resolution: "STATIC",
      ports: [{ number: 7070, name: "grpc", protocol: "GRPC" }],
      workloadSelector: { labels: { app: "greeter" } },
    }),
    networking("WorkloadEntry", "example", "greeter-v1", {
      address: "10.0.0.1",
      labels: { app: "greeter", version: "v1" },
      locality: "region1/zone1",
      ports: { grpc: 17070 },
    }),
    networking("WorkloadEntry", "example", "greeter-v2", {
      address: "10.0.0.2",
      labels: { app: "greeter", version: "v2" },
      locality: "region1/zone2",
      ports: { grpc: 27070 },
    }),
    networking("DestinationRule", "example", "greeter", {
      host: "greeter",
      subsets: [{ name: "v1", labels: { version: "v1" } }, { name: "v2", labels: { version: "v2" } }],
    }),
  ];
}

/** A VirtualService splitting greeter between v1 and v2. */
export function greeterSplit(v1: number, v2: number): Resource {
  return networking("VirtualService", "example", "greeter", {
    hosts: ["greeter"],
    http: [{
      route: [
        { destination: { host: "greeter", subset: "v1" }, weight: v1 },
        { destination: { host: "greeter", subset: "v2" }, weight: v2 },
      ],
    }],
  });
}

/** The FQDN of the greeter service. */
export const GREETER = "greeter.example.svc.cluster.local";

/** A mesh that uses every feature the gRPC generators translate. */
export function richWorld(): World {
  return new World().apply(
    ...greeterResources(),
    networking("ServiceEntry", "example", "multi", {
      hosts: ["multi.example.svc.cluster.local"],
      location: "MESH_INTERNAL",
      resolution: "STATIC",
      ports: [{ number: 80, name: "http", protocol: "HTTP" }, {
        number: 9090,
        name: "grpc",
        protocol: "GRPC",
      }],
      endpoints: [
        { address: "10.0.1.1", locality: "r/z/s", weight: 5 },
        { address: "10.0.1.2", locality: "r/z" },
        { address: "2001:db8::2" },
        { address: "host.example.com" },
      ],
    }),
    networking("ServiceEntry", "example", "external", {
      hosts: ["api.example.com"],
      resolution: "DNS",
      ports: [{ number: 443, name: "grpc", protocol: "GRPC" }],
    }),
    networking("ServiceEntry", "example", "wild", {
      hosts: ["*.wild.example.com"],
      location: "MESH_INTERNAL",
      resolution: "STATIC",
      ports: [{ number: 8443, name: "grpc", protocol: "GRPC" }],
      endpoints: [{ address: "10.0.4.1" }],
    }),
    networking("DestinationRule", "example", "greeter", {
      host: "greeter",
      trafficPolicy: {
        loadBalancer: { simple: "LEAST_CONN" },
        connectionPool: {
          tcp: { connectTimeout: "1s", maxConnections: 100 },
          http: { http1MaxPendingRequests: 10, http2MaxRequests: 1000, maxRetries: 3 },
        },
        outlierDetection: {
          consecutiveErrors: 2,
          consecutiveGatewayErrors: 4,
          consecutive5xxErrors: 5,
          interval: "10s",
          baseEjectionTime: "1m",
          maxEjectionPercent: 20,
          minHealthPercent: 30,
        },
      },
      subsets: [
        { name: "v1", labels: { version: "v1" }, trafficPolicy: { loadBalancer: { simple: "RANDOM" } } },
        {
          name: "v2",
          labels: { version: "v2" },
          trafficPolicy: {
            loadBalancer: { consistentHash: { httpCookie: { name: "c", path: "/", ttl: "10s" } } },
          },
        },
      ],
    }),
    networking("DestinationRule", "example", "multi", {
      host: "multi",
      trafficPolicy: { loadBalancer: { consistentHash: { useSourceIp: true, minimumRingSize: 4096 } } },
      subsets: [{
        name: "q",
        labels: {},
        trafficPolicy: { loadBalancer: { consistentHash: { httpQueryParameterName: "u" } } },
      }],
    }),
    networking("VirtualService", "example", "greeter", {
      hosts: ["greeter"],
      http: [
        {
          name: "everything",
          match: [
            {
              name: "m",
              uri: { regex: "/helloworld\\.Greeter/(SayHello|SayBye)" },
              headers: { "x-a": { exact: "" }, "x-b": { prefix: "" }, "x-c": { regex: "c+" }, "x-d": {} },
              withoutHeaders: { "x-e": { exact: "e" } },
              queryParams: { p: { prefix: "x" }, r: { regex: "y+" }, s: {} },
              method: { exact: "POST" },
              scheme: { exact: "http" },
              authority: { regex: "greeter.*" },
              ignoreUriCase: true,
            },
            { uri: { exact: "/helloworld.Greeter/SayHello" } },
          ],
          route: [
            { destination: { host: "greeter", subset: "v1" }, weight: 70 },
            { destination: { host: "greeter", subset: "v2", port: { number: 7070 } }, weight: 30 },
          ],
          timeout: "2.5s",
          retries: { attempts: 4, retryOn: "unavailable,cancelled,502,503", perTryTimeout: "250ms" },
          fault: { delay: { fixedDelay: "100ms", percentage: { value: 0.5 } }, abort: { httpStatus: 503 } },
          rewrite: { uri: "/v1/", authority: "greeter" },
        },
        {
          match: [{ uri: { prefix: "/multi" } }],
          route: [{ destination: { host: "multi", port: { number: 9090 } } }],
        },
        { route: [{ destination: { host: "greeter", subset: "v2" } }], retries: { attempts: 0 } },
      ],
    }),
  );
}
