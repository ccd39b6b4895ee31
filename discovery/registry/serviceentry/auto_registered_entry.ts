/**
 * The WorkloadEntry auto-registration writes for a proxy of a WorkloadGroup: its name, its spec from the
 * group's template, and the annotations that mark which replica holds it and since when.
 *
 * @module
 */
import type { Resource } from "@mesh/shared/config/resource";
import { NETWORKING_GROUP } from "@mesh/shared/config/kinds";
import type { WorkloadEntrySpec } from "@mesh/shared/config/networking/workload_entry";
import type { WorkloadGroupSpec } from "@mesh/shared/config/networking/workload_group";
import { parseSpiffeId } from "@mesh/shared/pki/spiffe_id";
import type { Proxy } from "../../model/proxy.ts";

/** Annotation naming the WorkloadGroup an auto-registered WorkloadEntry came from. */
export const AUTO_REGISTRATION_GROUP_ANNOTATION = "mesh.io/autoRegistrationGroup";
/** Annotation naming the discovery instance the workload is connected to. */
export const WORKLOAD_CONTROLLER_ANNOTATION = "mesh.io/workloadController";
/** Annotation with the time the workload last connected. */
export const CONNECTED_AT_ANNOTATION = "mesh.io/connectedAt";
/** Annotation with the time the workload disconnected; the entry is removed after the grace period. */
export const DISCONNECTED_AT_ANNOTATION = "mesh.io/disconnectedAt";

/** The name of the WorkloadEntry for a proxy of a group: `group-ip[-network]`, `:` of IPv6 made `-`. */
export function autoRegisteredEntryName(proxy: Proxy): string | undefined {
  const group = proxy.metadata.autoRegisterGroup;
  if (!group || proxy.ipAddresses.length === 0 || proxy.namespace === "") return undefined;
  const parts = [group, proxy.ipAddresses[0].replaceAll(":", "-")];
  if (proxy.metadata.network) parts.push(proxy.metadata.network);
  // An object name has at most 253 characters: the reference keeps the end, where the address is.
  return parts.join("-").slice(-253);
}

/**
 * The WorkloadEntry a proxy of a WorkloadGroup stands for: the group's template with the proxy's first
 * address, labels merged (proxy labels > group metadata labels > template labels), the proxy's network and
 * locality when it reports them.
 */
export function workloadEntryFromGroup(
  group: Resource<WorkloadGroupSpec>,
  proxy: Proxy,
  annotations: Readonly<Record<string, string>> = {},
): Resource<WorkloadEntrySpec> {
  const template = group.spec.template ?? {};
  const labels = { ...template.labels, ...group.spec.metadata?.labels, ...proxy.metadata.labels };
  const locality = proxy.locality
    ? [proxy.locality.region, proxy.locality.zone, proxy.locality.subZone].filter((p) => p).join("/")
    : "";
  const spec: WorkloadEntrySpec = {
    ...template,
    address: proxy.ipAddresses[0],
    labels,
    ...(proxy.metadata.network ? { network: proxy.metadata.network } : {}),
    ...(locality ? { locality } : {}),
  };
  return {
    gvk: { group: NETWORKING_GROUP, version: "v1alpha3", kind: "WorkloadEntry" },
    meta: {
      name: autoRegisteredEntryName(proxy) ?? `${group.meta.name}-${proxy.ipAddresses[0]}`,
      namespace: proxy.namespace,
      labels,
      annotations: {
        ...group.spec.metadata?.annotations,
        [AUTO_REGISTRATION_GROUP_ANNOTATION]: group.meta.name,
        ...annotations,
      },
    },
    spec,
  };
}

/**
 * Why `proxy` may not hold a WorkloadEntry of its namespace that runs as `serviceAccount` (undefined or empty:
 * any), or undefined when it may. Its caller must have proved an identity (a client certificate or a token, on
 * the secure xDS port) in the proxy's namespace, and of that service account when one is set: a node's
 * metadata is whatever a client writes, and without this any client of the plaintext port could put its own
 * address into the services of a namespace with a WorkloadGroup. The reference's later releases check the same.
 */
export function entryControlRefusal(proxy: Proxy, serviceAccount: string | undefined): string | undefined {
  const verified = proxy.verifiedIdentities ?? [];
  if (verified.length === 0) {
    return "the proxy's caller proved no identity; registering needs a client certificate or token on the " +
      "secure xDS port";
  }
  const identities = verified.flatMap((id) => {
    try {
      return [parseSpiffeId(id)];
    } catch {
      return [];
    }
  });
  const inNamespace = identities.filter((id) => id.namespace === proxy.namespace);
  if (inNamespace.length === 0) {
    return `no verified identity of the proxy (${
      verified.join(", ")
    }) is in its namespace "${proxy.namespace}"`;
  }
  if (serviceAccount && !inNamespace.some((id) => id.serviceAccount === serviceAccount)) {
    return `no verified identity of the proxy (${verified.join(", ")}) has the entry's service account ` +
      `"${serviceAccount}"`;
  }
  return undefined;
}

/** The connected and disconnected marks of one entry, as the wall clock's milliseconds. */
export function registrationMarks(
  entry: Resource<WorkloadEntrySpec>,
): { connectedAt?: number; disconnectedAt?: number } {
  const parse = (key: string) => {
    const value = Date.parse(entry.meta.annotations?.[key] ?? "");
    return Number.isNaN(value) ? undefined : value;
  };
  return { connectedAt: parse(CONNECTED_AT_ANNOTATION), disconnectedAt: parse(DISCONNECTED_AT_ANNOTATION) };
}
