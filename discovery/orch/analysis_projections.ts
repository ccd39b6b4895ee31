/**
 * The parts of orchestrator objects that configuration analysis reads, and nothing else: objects kept for
 * analysis alone (Deployments, Secrets, the injector's ConfigMap, custom resource definitions) are stored as
 * these slim copies, and a change to an object the registry already holds counts for analysis only when its
 * projection changed (a pod's status report does not). The shapes are `model/orch_object.ts`'s, which analysis reads
 * too.
 *
 * @module
 */

import type { OrchKind, OrchObject, OrchObjectMeta } from "../model/orch_object.ts";

/** The orchestrator kinds analysis reads. */
export type AnalysisObjectKind = OrchKind;
/** Metadata as analysis reads it. */
export type AnalysisObjectMeta = OrchObjectMeta;
/** An orchestrator object as analysis reads it. */
export type AnalysisObject = OrchObject;

/** The ConfigMap holding the injector's configuration and chart values (`injection.ImageAnalyzer`). */
export const INJECTOR_CONFIG_MAP = "mesh-sidecar-injector";
/** The label of Secrets holding remote clusters' credentials, one cluster per data key. */
const MULTI_CLUSTER_LABEL = "mesh/multiCluster";

type Raw = {
  metadata?: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
};

function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? value as Record<string, unknown>
    : {};
}

/**
 * The annotations analysis reads: those of the mesh's domains (the part before `/` ends in `mesh.io`: known
 * annotations, injection, suppression) and the ingress class; others (`last-applied-configuration`) are dropped.
 */
export function meshAnnotations(
  annotations: Readonly<Record<string, string>> | undefined,
): Record<string, string> | undefined {
  if (annotations === undefined) return undefined;
  const out: Record<string, string> = {};
  let any = false;
  for (const [name, value] of Object.entries(annotations)) {
    if (name !== "kubernetes.io/ingress.class" && !name.split("/")[0].endsWith("mesh.io")) continue;
    out[name] = value;
    any = true;
  }
  return any ? out : undefined;
}

/** Name, namespace, labels and the mesh's annotations. */
function slimMeta(raw: Raw, labels = true): AnalysisObjectMeta {
  const m = raw.metadata ?? {};
  const annotations = meshAnnotations(m.annotations);
  return {
    name: m.name ?? "",
    ...(m.namespace ? { namespace: m.namespace } : {}),
    ...(labels && m.labels ? { labels: { ...m.labels } } : {}),
    ...(annotations ? { annotations } : {}),
  };
}

/** Containers' names and images, the only container fields analysis reads. */
function containers(podSpec: unknown): { name: unknown; image: unknown }[] {
  const list = record(podSpec).containers;
  return Array.isArray(list) ? list.map((c) => ({ name: record(c).name, image: record(c).image })) : [];
}

/** A Pod, Service or Namespace the registry holds, lent to analysis without a copy. */
export function lentObject(kind: "Pod" | "Service" | "Namespace", raw: unknown): AnalysisObject {
  const object = raw as Raw;
  return {
    kind,
    metadata: object.metadata as AnalysisObjectMeta,
    ...(object.spec === undefined ? {} : { spec: object.spec }),
  };
}

/** What analysis reads of a Pod, Service or Namespace, for telling whether a change matters to it. */
export function lentProjection(kind: "Pod" | "Service" | "Namespace", raw: unknown): unknown {
  if (raw === undefined) return undefined;
  const object = raw as Raw;
  const meta = slimMeta(object);
  if (kind === "Pod") return [meta, containers(object.spec)];
  if (kind === "Service") {
    // Plain copies: the first list's objects are the client's classes, later events plain JSON.
    const ports = record(object.spec).ports;
    return [
      meta,
      { ...record(object.spec).selector as object },
      (Array.isArray(ports) ? ports : []).map((p) => {
        const { name, port, protocol, appProtocol, targetPort } = record(p);
        return [name, port, protocol, appProtocol, targetPort];
      }),
    ];
  }
  return meta;
}

/** A Deployment's metadata and pod template (labels, the mesh's annotations, containers). */
export function slimDeployment(raw: unknown): AnalysisObject {
  const object = raw as Raw;
  const template = record(record(object.spec).template);
  const meta = record(template.metadata) as Raw["metadata"];
  const annotations = meshAnnotations(meta?.annotations);
  return {
    kind: "Deployment",
    metadata: slimMeta(object),
    spec: {
      template: {
        metadata: {
          ...(meta?.labels ? { labels: meta.labels } : {}),
          ...(annotations ? { annotations } : {}),
        },
        spec: { containers: containers(template.spec) },
      },
    },
  };
}

/** A custom resource definition's group and kind. */
export function slimCrd(raw: unknown): AnalysisObject {
  const spec = record((raw as Raw).spec);
  return {
    kind: "CustomResourceDefinition",
    metadata: slimMeta(raw as Raw, false),
    spec: { group: spec.group, names: { kind: record(spec.names).kind } },
  };
}

/** The injector's ConfigMap with its `values` only; undefined for any other ConfigMap. */
export function slimConfigMap(raw: unknown): AnalysisObject | undefined {
  const object = raw as Raw;
  if (object.metadata?.name !== INJECTOR_CONFIG_MAP) return undefined;
  const values = object.data?.values;
  return {
    kind: "ConfigMap",
    metadata: slimMeta(object, false),
    ...(values === undefined ? {} : { data: { values } }),
  };
}

/**
 * A Secret without its values: its name (gateways' `credentialName`) and, for a remote clusters' Secret, its
 * label and the names of its keys (the clusters).
 */
export function slimSecret(raw: unknown): AnalysisObject {
  const object = raw as Raw;
  const multiCluster = object.metadata?.labels?.[MULTI_CLUSTER_LABEL] === "true";
  const meta = slimMeta(object, false);
  if (!multiCluster) return { kind: "Secret", metadata: meta };
  return {
    kind: "Secret",
    metadata: { ...meta, labels: { [MULTI_CLUSTER_LABEL]: "true" } },
    data: Object.fromEntries(Object.keys(object.data ?? {}).map((cluster) => [cluster, ""])),
  };
}
