import type { Resource } from "@mesh/shared/config/resource";

/**
 * Orders resources oldest first (creationTimestamp), then by namespace and name: the precedence Istio gives
 * conflicting configs (the oldest wins).
 */
export function compareByCreation(a: Resource, b: Resource): number {
  const at = a.meta.creationTimestamp ?? "";
  const bt = b.meta.creationTimestamp ?? "";
  if (at !== bt) return at < bt ? -1 : 1;
  if (a.meta.namespace !== b.meta.namespace) return a.meta.namespace < b.meta.namespace ? -1 : 1;
  return a.meta.name < b.meta.name ? -1 : a.meta.name > b.meta.name ? 1 : 0;
}

/** `namespace/name` of a resource. */
export function resourceName(resource: Resource): string {
  return `${resource.meta.namespace}/${resource.meta.name}`;
}
