/**
 * What the reference's injector does to a pod after the templates are merged in, outside any template:
 * cluster and network env from the webhook URL, prometheus annotations pointed at the agent, HTTP probes
 * rewritten to the agent's status port (`MESH_ORCH_APP_PROBERS`), the status annotation and network label, and
 * the container order.
 * @module
 */

import { parseGoBool } from "./annotation_validation.ts";

type Obj = Record<string, unknown>;

/** Names of the containers injection adds. */
export const PROXY_CONTAINER = "mesh-proxy";
const INIT_CONTAINER = "mesh-init";
const VALIDATION_CONTAINER = "mesh-validation";
const CORE_DUMP_CONTAINER = "enable-core-dump";
/** The annotation recording what injection added. */
export const STATUS_ANNOTATION = "sidecar.mesh.io/status";

const containers = (pod: Obj, field = "containers"): Obj[] =>
  ((pod.spec as Obj)[field] as Obj[] | undefined) ?? [];

const sidecarOf = (pod: Obj): Obj | undefined => containers(pod).find((c) => c.name === PROXY_CONTAINER);

/** The pod's annotations (created when absent). */
export function annotationsOf(pod: Obj): Record<string, string> {
  const metadata = (pod.metadata ??= {}) as Obj;
  return (metadata.annotations ??= {}) as Record<string, string>;
}

function labelsOf(pod: Obj): Record<string, string> {
  const metadata = (pod.metadata ??= {}) as Obj;
  return (metadata.labels ??= {}) as Record<string, string>;
}

/** Env from the webhook URL replaces the sidecar's env of the same names, appended in the order given. */
export function overwriteClusterEnv(pod: Obj, proxyEnvs: Readonly<Record<string, string>>): void {
  const sidecar = sidecarOf(pod);
  if (sidecar === undefined || Object.keys(proxyEnvs).length === 0) return;
  const env = ((sidecar.env as Obj[] | undefined) ?? []).filter((e) =>
    !Object.hasOwn(proxyEnvs, e.name as string)
  );
  sidecar.env = [...env, ...Object.entries(proxyEnvs).map(([name, value]) => ({ name, value }))];
}

/**
 * Metrics merge: the pod's own `prometheus.io/*` annotations move into the sidecar's
 * `MESH_PROMETHEUS_ANNOTATIONS` and the annotations point at the agent's merged endpoint. Off with the mesh's
 * `enablePrometheusMerge: false` or the pod's `prometheus.mesh.io/merge-metrics: "false"`.
 */
export function applyPrometheusMerge(pod: Obj, enabledInMesh: boolean, statusPort: number): void {
  const annotations = annotationsOf(pod);
  const podSetting = annotations["prometheus.mesh.io/merge-metrics"];
  const enabled = parseGoBool(podSetting) ?? enabledInMesh;
  if (!enabled) return;
  const target = String(statusPort);
  if (annotations["prometheus.io/port"] === target) return;
  const scrape = {
    scrape: annotations["prometheus.io/scrape"] ?? "",
    path: annotations["prometheus.io/path"] ?? "",
    port: annotations["prometheus.io/port"] ?? "",
  };
  const sidecar = sidecarOf(pod);
  if (sidecar !== undefined && (scrape.scrape || scrape.path || scrape.port)) {
    sidecar.env = [...(sidecar.env as Obj[] ?? []), {
      name: "MESH_PROMETHEUS_ANNOTATIONS",
      value: JSON.stringify(scrape),
    }];
  }
  annotations["prometheus.io/port"] = target;
  annotations["prometheus.io/path"] = "/stats/prometheus";
  annotations["prometheus.io/scrape"] = "true";
}

const PROBES = [["readinessProbe", "readyz"], ["livenessProbe", "livez"], [
  "startupProbe",
  "startupz",
]] as const;

/** The HTTP-GET prober of `probe` with named ports resolved; undefined when the agent need not probe it. */
function appProber(probe: unknown, ports: Map<string, unknown>, statusPort: number): Obj | undefined {
  const httpGet = (probe as Obj | undefined)?.httpGet as Obj | undefined;
  if (httpGet === undefined) return undefined;
  const copy: Obj = { ...httpGet };
  if (typeof copy.port === "string" && !/^\d+$/.test(copy.port)) {
    if (!ports.has(copy.port)) return undefined;
    copy.port = ports.get(copy.port);
  } else if (Number(copy.port) === statusPort) return undefined;
  const timeout = (probe as Obj).timeoutSeconds;
  const ordered: Obj = {};
  for (const key of ["path", "port", "host", "scheme", "httpHeaders"]) {
    if (copy[key] !== undefined) ordered[key] = copy[key];
  }
  return timeout ? { httpGet: ordered, timeoutSeconds: timeout } : { httpGet: ordered };
}

/**
 * Rewrites the app containers' HTTP probes to `:<status port>/app-health/<container>/<kind>` and gives the
 * originals to the agent in `MESH_ORCH_APP_PROBERS`. The pod's `sidecar.mesh.io/rewriteAppHTTPProbers`
 * decides when it is a boolean; otherwise `rewriteByDefault`.
 */
export function rewriteAppProbes(pod: Obj, rewriteByDefault: boolean, meshStatusPort: number): void {
  const annotations = annotationsOf(pod);
  const setting = annotations["sidecar.mesh.io/rewriteAppHTTPProbers"];
  const rewrite = parseGoBool(setting) ?? rewriteByDefault;
  const sidecar = sidecarOf(pod);
  if (!rewrite || sidecar === undefined) return;
  const probers: Obj = {};
  for (const c of containers(pod)) {
    if (c.name === PROXY_CONTAINER) continue;
    const ports = new Map(
      ((c.ports as Obj[] | undefined) ?? []).filter((p) => p.name).map((
        p,
      ) => [p.name as string, p.containerPort]),
    );
    for (const [field, kind] of PROBES) {
      const prober = appProber(c[field], ports, meshStatusPort);
      if (prober !== undefined) probers[`/app-health/${c.name}/${kind}`] = prober;
    }
  }
  const keys = Object.keys(probers).sort();
  if (keys.length > 0) {
    const value = JSON.stringify(Object.fromEntries(keys.map((k) => [k, probers[k]])));
    sidecar.env = [...(sidecar.env as Obj[] ?? []), { name: "MESH_ORCH_APP_PROBERS", value }];
  }
  const annotated = annotations["status.sidecar.mesh.io/port"];
  const statusPort = annotated === undefined ? meshStatusPort : Number.parseInt(annotated, 10) || 0;
  for (const c of containers(pod)) {
    if (c.name === PROXY_CONTAINER) continue;
    for (const [field, kind] of PROBES) {
      const probe = c[field] as Obj | undefined;
      if (probe?.httpGet === undefined) continue;
      const httpGet: Obj = {
        ...probe.httpGet as Obj,
        path: `/app-health/${c.name}/${kind}`,
        port: statusPort,
      };
      if (httpGet.scheme === "HTTPS") httpGet.scheme = "HTTP";
      c[field] = { ...probe, httpGet };
    }
  }
}

/** The status annotation's value: the names of what the templates added. */
export function injectionStatus(templatePod: Obj): string {
  const spec = (templatePod.spec ?? {}) as Obj;
  const names = (field: string) => {
    const list = (spec[field] as Obj[] | undefined) ?? [];
    return list.length === 0 ? null : list.map((item) => item.name);
  };
  return JSON.stringify({
    initContainers: names("initContainers"),
    containers: names("containers"),
    volumes: names("volumes"),
    imagePullSecrets: names("imagePullSecrets"),
  });
}

/** The network label, the status annotation and the configured `injectedAnnotations`. */
export function applyMetadata(
  pod: Obj,
  templatePod: Obj,
  network: string | undefined,
  injectedAnnotations: Readonly<Record<string, string>>,
): void {
  if (network !== undefined) labelsOf(pod)["topology.mesh.io/network"] = network;
  const annotations = annotationsOf(pod);
  annotations[STATUS_ANNOTATION] = injectionStatus(templatePod);
  Object.assign(annotations, injectedAnnotations);
}

function move(list: Obj[] | undefined, name: string, first: boolean): Obj[] | undefined {
  if (list === undefined) return undefined;
  const found = list.filter((c) => c.name === name);
  const rest = list.filter((c) => c.name !== name);
  return first ? [...found, ...rest] : [...rest, ...found];
}

/** The sidecar last (first when the app waits for it), validation first and iptables setup last of the inits. */
export function reorderContainers(pod: Obj, holdApplication: boolean): void {
  const spec = pod.spec as Obj;
  spec.containers = move(spec.containers as Obj[] | undefined, PROXY_CONTAINER, holdApplication);
  let inits = move(spec.initContainers as Obj[] | undefined, VALIDATION_CONTAINER, true);
  inits = move(inits, INIT_CONTAINER, false);
  inits = move(inits, CORE_DUMP_CONTAINER, false);
  if (inits !== undefined) spec.initContainers = inits;
  if (spec.containers === undefined) delete spec.containers;
}
