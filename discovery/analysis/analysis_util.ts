/**
 * Names, constants and small rules several analyzers share, as the reference's analyzer utilities define them
 * (renamed): system namespaces, the injection labels, host scoping by `exportTo`, label selectors.
 * @module
 */
import { selectorMatches } from "../model/labels.ts";

/** The orchestrator's system namespaces, which injection and port-name checks skip. */
export const SYSTEM_NAMESPACES: readonly string[] = [
  "kube-system",
  "kube-public",
  "kube-node-lease",
  "local-path-storage",
];
/** Name of the proxy container injection adds. */
export const PROXY_CONTAINER = "mesh-proxy";
/** The namespace label that turns injection on (`enabled`) or off. */
export const INJECTION_LABEL = "mesh-injection";
/** The revision label that selects a revision's injector. */
export const REVISION_LABEL = "mesh.io/rev";
/** The pod annotation that turns injection on or off. */
export const SIDECAR_INJECT_ANNOTATION = "sidecar.mesh.io/inject";
/** The Service annotation naming the namespaces it is exported to. */
export const EXPORT_TO_ANNOTATION = "networking.mesh.io/exportTo";
/** The gateway name meaning the sidecars of the mesh. */
export const MESH_GATEWAY = "mesh";
/** The domain suffix of orchestrator services, fixed in the reference's analyzers. */
export const SERVICE_DOMAIN = "svc.cluster.local";

const FQDN = /^(.+)\.(.+)\.svc\.cluster\.local$/;

/** True for the orchestrator's own namespaces. */
export function isSystemNamespace(namespace: string): boolean {
  return SYSTEM_NAMESPACES.includes(namespace);
}

/** True when exportTo exports to every namespace: empty, or `*` before any `.`. */
export function isExportToAll(exportTo: readonly string[] | undefined): boolean {
  let all = true;
  for (const e of exportTo ?? []) {
    if (e === ".") all = false;
    else if (e === "*") return true;
  }
  return all;
}

/** A short host name completed with its namespace and the service domain; dotted and wildcard hosts stay. */
export function hostToFqdn(namespace: string, host: string): string {
  return host.startsWith("*") || host.includes(".") ? host : `${host}.${namespace}.${SERVICE_DOMAIN}`;
}

/** `scope/fqdn`: a host as seen from the namespaces of `scope` (`*` for all). */
export function scopedFqdn(scope: string, namespace: string, host: string): string {
  return `${scope}/${hostToFqdn(namespace, host)}`;
}

/** Splits a scoped FQDN into its scope and host. */
export function splitScopedFqdn(scoped: string): [string, string] {
  const slash = scoped.indexOf("/");
  return [scoped.slice(0, slash), scoped.slice(slash + 1)];
}

/** Namespace and name of a service FQDN (`name.ns.svc.cluster.local`); both empty for other hosts. */
export function fullNameFromFqdn(fqdn: string): { namespace: string; name: string } {
  const match = FQDN.exec(fqdn);
  return match ? { namespace: match[2], name: match[1] } : { namespace: "", name: "" };
}

/** The resource name a destination host names: a service FQDN's, else the host itself in `namespace`. */
export function resourceNameFromHost(namespace: string, host: string): string {
  const name = fullNameFromFqdn(host);
  return name.namespace === "" ? `${namespace}/${host}` : `${name.namespace}/${name.name}`;
}

/** `ns/name` from a reference that may name its namespace (`ns/name`) or not (`name`, in `namespace`). */
export function shortOrFullName(namespace: string, name: string): string {
  return name.includes("/") ? name : `${namespace}/${name}`;
}

/** The reference's full name of a resource: `ns/name`, or `name` without a namespace. */
export function fullName(namespace: string, name: string): string {
  return namespace === "" ? name : `${namespace}/${name}`;
}

/** A label selector as the orchestrator prints it: `k=v` pairs sorted by key, comma-separated. */
export function selectorString(selector: Readonly<Record<string, string>> | undefined): string {
  return Object.keys(selector ?? {}).sort().map((k) => `${k}=${selector![k]}`).join(",");
}

/** True when `selector` selects `labels`; an empty or absent selector selects everything. */
export function selects(
  selector: Readonly<Record<string, string>> | undefined,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  return selectorMatches(selector, labels ?? {});
}

/** A container of a pod spec, the fields analyzers read. */
export interface ContainerSpec {
  readonly name?: string;
  readonly image?: string;
}

/** The image of the proxy container, or "" when the pod has none. */
export function proxyImage(containers: readonly ContainerSpec[] | undefined): string {
  return (containers ?? []).find((c) => c.name === PROXY_CONTAINER)?.image ?? "";
}

/**
 * Whether a workload is in the mesh: it has a proxy container with an image; else its inject annotation says
 * so; else its namespace's injection label is `enabled` (when the namespace object exists); else not.
 */
export function workloadInMesh(
  annotations: Readonly<Record<string, string>> | undefined,
  containers: readonly ContainerSpec[] | undefined,
  namespaceLabels: Readonly<Record<string, string>> | undefined | null,
): boolean {
  if (proxyImage(containers) !== "") return true;
  const inject = annotations?.[SIDECAR_INJECT_ANNOTATION];
  if (inject !== undefined) return inject === "true";
  if (namespaceLabels) return namespaceLabels[INJECTION_LABEL] === "enabled";
  return false;
}

/** Reads a value as an object, or an empty one. */
export function asRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? value as Record<string, unknown>
    : {};
}

/** Reads a value as a list, or an empty one. */
export function asList<T = unknown>(value: unknown): readonly T[] {
  return Array.isArray(value) ? value as T[] : [];
}

/** Reads a value as a string, or "". */
export function asString(value: unknown): string {
  return typeof value === "string" ? value : "";
}
