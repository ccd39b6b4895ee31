/**
 * Turns the orchestrator's Services, Endpoints, Pods and Nodes into the same model objects the ServiceEntry
 * registry makes, so every generator works unchanged: a Service becomes `<name>.<namespace>.svc.<domain>`
 * with its ports (protocol from `appProtocol`, else the port name's prefix), its cluster IP, and its
 * resolution (load balanced; passthrough when headless; DNS for ExternalName).
 *
 * @module
 */
import type { WorkloadEntrySpec } from "@mesh/shared/config/networking/workload_entry";
import { parseProtocol } from "@mesh/shared/config/validation/ports";
import { type Endpoint, tlsModeFromLabels } from "../model/endpoint.ts";
import type { Service, ServicePort, ServiceProtocol } from "../model/service.ts";
import type {
  OrchEndpointAddress,
  OrchEndpoints,
  OrchNamespace,
  OrchNode,
  OrchPod,
  OrchService,
} from "./orch_objects.ts";

/** The annotations that narrow where a Service is visible (ours, then Istio's). */
export const EXPORT_TO_ANNOTATIONS: readonly string[] = [
  "networking.mesh.io/exportTo",
  "networking.istio.io/exportTo",
];

/** Node labels that carry the locality. */
const REGION_LABELS = ["topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region"];
const ZONE_LABELS = ["topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"];
const SUBZONE_LABEL = "topology.mesh.io/subzone";

/** What conversion needs besides the object. */
export interface ConvertContext {
  /** `--domain`. */
  readonly domain: string;
  /** `--clusterID`. */
  readonly clusterId: string;
  /** Mesh `defaultServiceExportTo`. */
  readonly defaultExportTo: readonly string[];
  /** DISCOVERY_ENABLE_EDS_FOR_HEADLESS_SERVICES: load-balance headless services over their endpoints. */
  readonly edsForHeadless: boolean;
}

/** The hostname of a Service. */
export function serviceHostname(name: string, namespace: string, domain: string): string {
  return `${name}.${namespace}.svc.${domain}`;
}

/** A port's protocol: `appProtocol`, else the port name's prefix before `-`, else UDP/unknown. */
export function portProtocol(
  port: { name?: string; protocol?: string; appProtocol?: string },
): ServiceProtocol {
  if (port.protocol === "UDP") return "UDP";
  const fromApp = port.appProtocol ? parseProtocol(port.appProtocol) : undefined;
  if (fromApp !== undefined) return fromApp;
  const prefix = (port.name ?? "").split("-")[0];
  return parseProtocol(prefix) ?? "Unsupported";
}

/**
 * The creation time in one form (ISO with milliseconds): lists deliver it as a Date, watch events as the API's
 * text, and the same object must convert to the same service either way.
 */
function creationTime(meta: OrchService["metadata"]): string | undefined {
  const t = meta.creationTimestamp;
  if (t === undefined) return undefined;
  const date = t instanceof Date ? t : new Date(t);
  return Number.isNaN(date.getTime()) ? String(t) : date.toISOString();
}

/** The model Service of an orchestrator Service. */
export function serviceFromOrch(svc: OrchService, ctx: ConvertContext): Service {
  const namespace = svc.metadata.namespace ?? "default";
  const spec = svc.spec ?? {};
  const externalName = spec.type === "ExternalName" && spec.externalName ? spec.externalName : undefined;
  const headless = spec.clusterIP === "None";
  const exportTo = EXPORT_TO_ANNOTATIONS.map((a) => svc.metadata.annotations?.[a]).find((v) =>
    v !== undefined
  );
  const ports: ServicePort[] = (spec.ports ?? []).map((p) => ({
    // An unnamed port (allowed when it is the only one) is unnamed in Endpoints too: "" matches both.
    name: p.name ?? "",
    port: p.port,
    protocol: portProtocol(p),
  }));
  const time = creationTime(svc.metadata);
  // What reaches the service from outside its cluster: a network gateway's addresses (`registryServiceName`).
  const external = [
    ...(svc.status?.loadBalancer?.ingress ?? []).map((i) => i.ip || i.hostname || ""),
    ...(spec.externalIPs ?? []),
  ].filter((a) => a !== "");
  return {
    hostname: serviceHostname(svc.metadata.name, namespace, ctx.domain),
    namespace,
    ports,
    addresses: spec.clusterIP && !headless ? [spec.clusterIP] : [],
    resolution: externalName !== undefined
      ? "DNSLB"
      : headless && !ctx.edsForHeadless
      ? "Passthrough"
      : "ClientSideLB",
    exportTo: exportTo === undefined
      ? [...ctx.defaultExportTo]
      : exportTo.split(",").map((s) => s.trim()).filter((s) => s !== "").map((s) =>
        s === "." ? namespace : s
      ),
    labels: { ...(svc.metadata.labels ?? {}) },
    meshExternal: externalName !== undefined,
    serviceAccounts: [],
    attributes: {
      serviceRegistry: "Orchestrator",
      clusterId: ctx.clusterId,
      name: svc.metadata.name,
      namespace,
      ...(spec.selector ? { labelSelectors: { ...spec.selector } } : {}),
    },
    ...(time ? { creationTime: time } : {}),
    ...(external.length > 0 ? { externalAddresses: [...new Set(external)] } : {}),
  };
}

/** Labels that put a workload (or every workload of a namespace) on a network, ours first. */
export const NETWORK_LABELS = ["topology.mesh.io/network", "topology.istio.io/network"] as const;

/** The network of an endpoint: its pod's network label, else its namespace's, else none. */
export function networkOf(
  podLabels: Readonly<Record<string, string>>,
  namespace: OrchNamespace | undefined,
): string {
  for (const labels of [podLabels, namespace?.metadata.labels ?? {}]) {
    for (const key of NETWORK_LABELS) if (labels[key]) return labels[key];
  }
  return "";
}

/** The locality of a node, `region/zone/subzone` (empty parts left empty). */
export function nodeLocality(node: OrchNode | undefined): string {
  const labels = node?.metadata.labels ?? {};
  const first = (keys: readonly string[]) => keys.map((k) => labels[k]).find((v) => v !== undefined) ?? "";
  const parts = [first(REGION_LABELS), first(ZONE_LABELS), labels[SUBZONE_LABEL] ?? ""];
  while (parts.length > 0 && parts.at(-1) === "") parts.pop();
  return parts.join("/");
}

/** The result of converting an Endpoints object. */
export interface ConvertedEndpoints {
  readonly endpoints: Endpoint[];
  /** `namespace/name` of pods the endpoints name that are not known yet; their addresses are left out. */
  readonly pendingPods: string[];
}

/**
 * The model endpoints of an Endpoints object: one per address and port, ready addresses healthy and not-ready
 * ones unhealthy, each with its pod's labels, service account and TLS mode and its node's locality. An
 * address whose pod is not known yet is left out and reported, so it is added when the pod arrives.
 */
export function endpointsFromOrch(
  eps: OrchEndpoints,
  pods: (namespace: string, name: string) => OrchPod | undefined,
  nodes: (name: string) => OrchNode | undefined,
  ctx: ConvertContext,
  namespaces: (name: string) => OrchNamespace | undefined = () => undefined,
): ConvertedEndpoints {
  const namespace = eps.metadata.namespace ?? "default";
  const out: Endpoint[] = [];
  const pending: string[] = [];
  const convert = (
    address: OrchEndpointAddress,
    healthy: boolean,
    ports: readonly { name?: string; port: number }[],
  ) => {
    let pod: OrchPod | undefined;
    if (address.targetRef?.kind === "Pod" && address.targetRef.name) {
      const podNamespace = address.targetRef.namespace ?? namespace;
      pod = pods(podNamespace, address.targetRef.name);
      if (pod === undefined) {
        pending.push(`${podNamespace}/${address.targetRef.name}`);
        return;
      }
    }
    const labels = { ...(pod?.metadata.labels ?? {}) };
    const nodeName = address.nodeName ?? pod?.spec?.nodeName;
    for (const port of ports) {
      out.push({
        address: address.ip,
        endpointPort: port.port,
        servicePortName: port.name ?? "",
        labels,
        locality: { label: nodeLocality(nodeName ? nodes(nodeName) : undefined), clusterId: ctx.clusterId },
        network: networkOf(labels, namespaces(pod?.metadata.namespace ?? namespace)),
        weight: 1,
        tlsMode: tlsModeFromLabels(labels),
        serviceAccount: pod?.spec?.serviceAccountName ?? (pod ? "default" : ""),
        namespace: pod?.metadata.namespace ?? namespace,
        workloadName: pod?.metadata.name ?? "",
        healthy,
      });
    }
  };
  for (const subset of eps.subsets ?? []) {
    const ports = subset.ports ?? [];
    for (const address of subset.addresses ?? []) convert(address, true, ports);
    for (const address of subset.notReadyAddresses ?? []) convert(address, false, ports);
  }
  return { endpoints: out, pendingPods: pending };
}

/**
 * A pod as a WorkloadEntry would describe it, for ServiceEntries that select pods; undefined for a pod that
 * cannot take traffic (no IP, not running, or not ready).
 */
export function podWorkloadSpec(
  pod: OrchPod,
  nodes: (name: string) => OrchNode | undefined,
): WorkloadEntrySpec | undefined {
  const ip = pod.status?.podIP;
  if (!ip || pod.status?.phase !== "Running") return undefined;
  const ready = pod.status.conditions?.find((c) => c.type === "Ready");
  if (ready !== undefined && ready.status !== "True") return undefined;
  const locality = nodeLocality(pod.spec?.nodeName ? nodes(pod.spec.nodeName) : undefined);
  return {
    address: ip,
    labels: { ...(pod.metadata.labels ?? {}) },
    serviceAccount: pod.spec?.serviceAccountName ?? "default",
    ...(locality !== "" ? { locality } : {}),
  };
}
