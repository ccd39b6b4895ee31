/**
 * The fields of orchestrator objects' specs that analyzers read (Pod, Deployment, Service), read defensively:
 * a field of the wrong shape reads as absent.
 * @module
 */
import type { OrchObject } from "./analysis_input.ts";
import { asList, asRecord, type ContainerSpec } from "./analysis_util.ts";

/** A Service port as its API serves it. */
export interface OrchServicePort {
  readonly name?: string;
  readonly port?: number;
  readonly protocol?: string;
  readonly appProtocol?: string;
  readonly targetPort?: number | string;
}

/** The containers of a Pod. */
export function podContainers(pod: OrchObject): readonly ContainerSpec[] {
  return asList<ContainerSpec>(asRecord(pod.spec).containers);
}

/** The pod template of a Deployment: its labels, annotations and containers. */
export function deploymentTemplate(deployment: OrchObject): {
  labels: Readonly<Record<string, string>>;
  annotations: Readonly<Record<string, string>>;
  containers: readonly ContainerSpec[];
} {
  const template = asRecord(asRecord(deployment.spec).template);
  const meta = asRecord(template.metadata);
  return {
    labels: asRecord(meta.labels) as Record<string, string>,
    annotations: asRecord(meta.annotations) as Record<string, string>,
    containers: asList<ContainerSpec>(asRecord(template.spec).containers),
  };
}

/** The selector of a Service (empty when absent: it then selects every pod, as the reference reads it). */
export function serviceSelector(service: OrchObject): Readonly<Record<string, string>> {
  return asRecord(asRecord(service.spec).selector) as Record<string, string>;
}

/** The ports of a Service. */
export function servicePorts(service: OrchObject): readonly OrchServicePort[] {
  return asList<OrchServicePort>(asRecord(service.spec).ports);
}

/** The labels of the Namespace objects, by name; a namespace without an object is absent. */
export function namespaceLabels(
  namespaces: readonly OrchObject[],
): Map<string, Readonly<Record<string, string>>> {
  return new Map(namespaces.map((n) => [n.metadata.name, n.metadata.labels ?? {}]));
}
