/**
 * EndpointSlices (`DISCOVERY_USE_ENDPOINT_SLICE`) as the Endpoints object they jointly describe: a service's
 * slices are found by their `kubernetes.io/service-name` label and merged into one Endpoints with a subset per
 * slice, so everything downstream (pods, nodes, readiness, pending pods) is shared with the Endpoints path.
 *
 * @module
 */
import { addTo, removeFrom } from "../model/set_map.ts";
import type { OrchEndpointAddress, OrchEndpoints, OrchEndpointSlice } from "./orch_objects.ts";

/** The label naming a slice's service. */
export const SERVICE_NAME_LABEL = "kubernetes.io/service-name";

/** `namespace/service` of a slice, or undefined for a slice that belongs to no service. */
export function sliceServiceKey(slice: OrchEndpointSlice): string | undefined {
  const service = slice.metadata.labels?.[SERVICE_NAME_LABEL];
  return service ? `${slice.metadata.namespace ?? "default"}/${service}` : undefined;
}

/**
 * The Endpoints equivalent of `slices` (all of one service): ready endpoints as addresses, others as not-ready
 * addresses, each slice's ports with its subset. FQDN slices (addresses that are names) are left out.
 */
export function endpointsFromSlices(
  namespace: string,
  service: string,
  slices: readonly OrchEndpointSlice[],
): OrchEndpoints {
  const ordered = [...slices].sort((a, b) => a.metadata.name < b.metadata.name ? -1 : 1);
  return {
    metadata: { name: service, namespace },
    subsets: ordered.filter((slice) => slice.addressType !== "FQDN").map((slice) => {
      const addresses: OrchEndpointAddress[] = [];
      const notReady: OrchEndpointAddress[] = [];
      for (const endpoint of slice.endpoints ?? []) {
        const ready = endpoint.conditions?.ready ?? true;
        for (const ip of endpoint.addresses) {
          const address = {
            ip,
            ...(endpoint.nodeName ? { nodeName: endpoint.nodeName } : {}),
            ...(endpoint.targetRef ? { targetRef: endpoint.targetRef } : {}),
          };
          (ready ? addresses : notReady).push(address);
        }
      }
      return {
        addresses,
        notReadyAddresses: notReady,
        ports: (slice.ports ?? []).filter((p) => p.port !== undefined).map((p) => ({
          ...(p.name ? { name: p.name } : {}),
          port: p.port!,
          ...(p.protocol ? { protocol: p.protocol } : {}),
        })),
      };
    }),
  };
}

/** Which slices make up each service's endpoints, by the service each slice last named. */
export class SliceFiling {
  /** Slice key → the `ns/service` it was last filed under, so a deleted or relabelled slice is found. */
  readonly #serviceOf = new Map<string, string>();
  /** `ns/service` → keys of its slices. */
  readonly #slicesOf = new Map<string, Set<string>>();

  /** Files `slice` (undefined when deleted) under its service; returns the services whose slices changed. */
  file(sliceKey: string, slice: OrchEndpointSlice | undefined): string[] {
    const before = this.#serviceOf.get(sliceKey);
    const after = slice === undefined ? undefined : sliceServiceKey(slice);
    if (before !== undefined && before !== after) {
      removeFrom(this.#slicesOf, before, sliceKey);
      this.#serviceOf.delete(sliceKey);
    }
    if (after !== undefined) {
      addTo(this.#slicesOf, after, sliceKey);
      this.#serviceOf.set(sliceKey, after);
    }
    return [...new Set([before, after].filter((k) => k !== undefined))];
  }

  /** Keys of the slices filed under `serviceKey`. */
  slicesOf(serviceKey: string): string[] {
    return [...this.#slicesOf.get(serviceKey) ?? []];
  }
}
