/**
 * The benchmark mesh: services in namespaces of ten, each a ServiceEntry selecting three WorkloadEntries,
 * with a VirtualService (a header match and a weighted split over two subsets) and a DestinationRule
 * (traffic policy and the two subsets). One YAML file per service, so an edit re-parses one small file.
 *
 * @module
 */
import { stringify } from "yaml";

/** Services per namespace, as the issue asks. */
export const SERVICES_PER_NAMESPACE = 10;

/** Endpoints (WorkloadEntries) per service. */
export const ENDPOINTS_PER_SERVICE = 3;

/** The service port every service exposes. */
export const SERVICE_PORT = 8080;

/** The DNS suffix of every service host. */
const DOMAIN = "svc.cluster.local";

/** The parts of one service that the benchmark edits between rounds. */
export interface ServiceKnobs {
  /** Weight of subset v1 in the default route; v2 gets the rest. */
  readonly v1Weight: number;
  /** The DestinationRule's simple load-balancing policy. */
  readonly lb: "ROUND_ROBIN" | "LEAST_CONN";
  /** Load-balancing weight of the service's first endpoint. */
  readonly firstEndpointWeight: number;
}

/** The knobs every service starts with. */
export const INITIAL_KNOBS: ServiceKnobs = Object.freeze({
  v1Weight: 90,
  lb: "ROUND_ROBIN",
  firstEndpointWeight: 1,
});

/** One service of the mesh. */
export interface MeshService {
  readonly namespace: string;
  readonly name: string;
  readonly host: string;
  /** Path of its file, relative to the config dir. */
  readonly file: string;
  readonly index: number;
}

/** The `i`-th service (0-based) of the mesh. */
export function meshService(index: number): MeshService {
  const ns = Math.floor(index / SERVICES_PER_NAMESPACE);
  const namespace = `ns-${String(ns).padStart(3, "0")}`;
  const name = `svc-${index % SERVICES_PER_NAMESPACE}`;
  return {
    namespace,
    name,
    host: `${name}.${namespace}.${DOMAIN}`,
    file: `${namespace}/${name}.yaml`,
    index,
  };
}

/** The IPv4 address of endpoint `k` of service `index`: unique for up to 65536 services. */
export function endpointAddress(index: number, k: number): string {
  return `10.${64 + Math.floor(index / 256) % 64}.${index % 256}.${k + 1}`;
}

/** The cluster names a proxy sees for one service: the whole service and each subset. */
export function clusterNames(service: MeshService): string[] {
  return ["", "v1", "v2"].map((subset) => `outbound|${SERVICE_PORT}|${subset}|${service.host}`);
}

/** The listener (and route configuration) name of a service for proxyless gRPC: `host:port`. */
export function listenerName(service: MeshService): string {
  return `${service.host}:${SERVICE_PORT}`;
}

/** The config documents of one service, as plain objects. */
export function serviceDocuments(service: MeshService, knobs: ServiceKnobs): Record<string, unknown>[] {
  const { namespace, name, host, index } = service;
  const meta = (n: string) => ({ name: n, namespace });
  const serviceEntry = {
    apiVersion: "networking.mesh.io/v1beta1",
    kind: "ServiceEntry",
    metadata: meta(name),
    spec: {
      hosts: [host],
      location: "MESH_INTERNAL",
      resolution: "STATIC",
      ports: [{ number: SERVICE_PORT, name: "grpc", protocol: "GRPC" }],
      workloadSelector: { labels: { app: name } },
    },
  };
  const workloads = Array.from({ length: ENDPOINTS_PER_SERVICE }, (_, k) => ({
    apiVersion: "networking.mesh.io/v1beta1",
    kind: "WorkloadEntry",
    metadata: meta(`${name}-${k}`),
    spec: {
      address: endpointAddress(index, k),
      labels: { app: name, version: k < 2 ? "v1" : "v2" },
      locality: `us-east1/us-east1-${k % 2 === 0 ? "b" : "c"}`,
      serviceAccount: name,
      ports: { grpc: SERVICE_PORT },
      ...(k === 0 ? { weight: knobs.firstEndpointWeight } : {}),
    },
  }));
  const destination = (subset: string) => ({ host, subset });
  const virtualService = {
    apiVersion: "networking.mesh.io/v1beta1",
    kind: "VirtualService",
    metadata: meta(name),
    spec: {
      hosts: [host],
      http: [
        {
          name: "canary",
          match: [{ headers: { "x-canary": { exact: "1" } } }],
          route: [{ destination: destination("v2") }],
        },
        {
          name: "default",
          route: [
            { destination: destination("v1"), weight: knobs.v1Weight },
            { destination: destination("v2"), weight: 100 - knobs.v1Weight },
          ],
          timeout: "5s",
          retries: { attempts: 2, perTryTimeout: "1s", retryOn: "unavailable" },
        },
      ],
    },
  };
  const destinationRule = {
    apiVersion: "networking.mesh.io/v1beta1",
    kind: "DestinationRule",
    metadata: meta(name),
    spec: {
      host,
      trafficPolicy: {
        loadBalancer: { simple: knobs.lb },
        connectionPool: { http: { http2MaxRequests: 1000, maxRequestsPerConnection: 100 } },
        outlierDetection: { consecutive5xxErrors: 5, interval: "10s", baseEjectionTime: "30s" },
      },
      subsets: [
        { name: "v1", labels: { version: "v1" } },
        { name: "v2", labels: { version: "v2" } },
      ],
    },
  };
  return [serviceEntry, ...workloads, virtualService, destinationRule];
}

/** The YAML text of one service's file. */
export function serviceYaml(service: MeshService, knobs: ServiceKnobs): string {
  return serviceDocuments(service, knobs).map((doc) => stringify(doc)).join("---\n");
}

/**
 * Writes the mesh of `services` services under `configDir` (which must exist and be empty), one directory
 * per namespace.
 */
export async function writeMesh(configDir: string, services: number): Promise<MeshService[]> {
  const out: MeshService[] = [];
  for (let i = 0; i < services; i++) {
    const service = meshService(i);
    if (i % SERVICES_PER_NAMESPACE === 0) await Deno.mkdir(`${configDir}/${service.namespace}`);
    await Deno.writeTextFile(`${configDir}/${service.file}`, serviceYaml(service, INITIAL_KNOBS));
    out.push(service);
  }
  return out;
}

/**
 * Writes a Sidecar per namespace of the mesh that limits its workloads' egress to their own namespace and,
 * when given, the one service `shared` (the service the benchmark edits, so every edit reaches every proxy):
 * the "scoped" sidecars of the load benchmark.
 */
export async function writeNamespaceSidecars(
  configDir: string,
  services: number,
  shared?: MeshService,
): Promise<void> {
  const hosts = ['"./*"', ...(shared === undefined ? [] : [`"${shared.namespace}/${shared.host}"`])];
  for (let i = 0; i < services; i += SERVICES_PER_NAMESPACE) {
    const { namespace } = meshService(i);
    await Deno.writeTextFile(
      `${configDir}/${namespace}/sidecar.yaml`,
      `apiVersion: networking.mesh.io/v1beta1
kind: Sidecar
metadata:
  name: default
  namespace: ${namespace}
spec:
  egress:
    - hosts: [${hosts.join(", ")}]
`,
    );
  }
}

/**
 * Replaces one service's file atomically: the new text is written beside the config dir and renamed into
 * place, so the watcher never reads a half-written file. Returns the wall-clock time (ms since the epoch,
 * sub-millisecond) at which the rename finished.
 */
export async function rewriteService(
  configDir: string,
  scratchDir: string,
  service: MeshService,
  knobs: ServiceKnobs,
): Promise<number> {
  const staged = `${scratchDir}/${service.namespace}-${service.name}.yaml`;
  await Deno.writeTextFile(staged, serviceYaml(service, knobs));
  await Deno.rename(staged, `${configDir}/${service.file}`);
  return epochMs();
}

/** Wall-clock milliseconds since the epoch with sub-millisecond resolution, comparable across processes. */
export function epochMs(): number {
  return performance.timeOrigin + performance.now();
}
