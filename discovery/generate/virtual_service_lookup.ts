/**
 * The VirtualService that routes a hostname for a proxy, and the identity of what a route built from it reads.
 *
 * @module
 */
import { compareHostSpecificity, hostSubsetOf, isWildcardHost } from "../model/host_match.ts";
import type { PushContext } from "../push/push_context.ts";
import type { IndexedVirtualService } from "../push/virtual_service_index.ts";
import { configFingerprint } from "./fingerprint.ts";
import { derivedTable } from "../push/derived_memo.ts";

interface HostIndex {
  readonly exact: ReadonlyMap<string, IndexedVirtualService>;
  readonly wildcards: readonly (readonly [string, IndexedVirtualService])[];
}

const HOST_INDEXES = derivedTable<readonly IndexedVirtualService[], undefined, HostIndex>(
  "virtualServiceHosts",
);

function hostIndex(push: PushContext, list: readonly IndexedVirtualService[]): HostIndex {
  return push.derived.get(HOST_INDEXES, list, undefined, () => {
    const exact = new Map<string, IndexedVirtualService>();
    const wildcards: [string, IndexedVirtualService][] = [];
    // The list is oldest first, and the oldest VirtualService claiming a host wins, as in Istio.
    for (const vs of list) {
      for (const host of vs.hosts) {
        if (!exact.has(host)) exact.set(host, vs);
        if (isWildcardHost(host)) wildcards.push([host, vs]);
      }
    }
    return { exact, wildcards };
  });
}

/**
 * The VirtualService among `list` (oldest first, one of `push`'s lists) that routes `hostname`: the oldest
 * naming it exactly, else the one with the most specific wildcard host covering it (the oldest among equals).
 */
export function virtualServiceFor(
  push: PushContext,
  list: readonly IndexedVirtualService[],
  hostname: string,
): IndexedVirtualService | undefined {
  const index = hostIndex(push, list);
  const exact = index.exact.get(hostname);
  if (exact !== undefined) return exact;
  let best: readonly [string, IndexedVirtualService] | undefined;
  for (const entry of index.wildcards) {
    if (!hostSubsetOf(hostname, entry[0])) continue;
    if (best === undefined || compareHostSpecificity(entry[0], best[0]) < 0) best = entry;
  }
  return best?.[1];
}

/**
 * The identity of a VirtualService's routes: its own version and that of every delegate merged into it
 * (a delegate that no longer exists is named as missing).
 */
export function virtualServiceFingerprint(vs: IndexedVirtualService, push: PushContext): string {
  const parts = [configFingerprint(push.derived, vs.resource)];
  for (const delegate of vs.delegates) {
    const slash = delegate.indexOf("/");
    const namespace = delegate.slice(0, slash);
    const name = delegate.slice(slash + 1);
    const resource = push.configs("VirtualService").find((r) =>
      r.meta.namespace === namespace && r.meta.name === name
    );
    parts.push(resource === undefined ? `${delegate}@missing` : configFingerprint(push.derived, resource));
  }
  return parts.join("+");
}
