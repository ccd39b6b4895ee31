/**
 * A service's instances grouped by the cluster that reported them, as the endpoint index publishes them: built
 * whole from a registry's list, or patched from the previous grouping when only a run of the list changed.
 *
 * @module
 */
import { isDeepStrictEqual } from "node:util";
import type { ServiceInstance } from "../model/endpoint.ts";
import { deepFreeze } from "../model/deep_freeze.ts";
import { FrozenMap } from "./frozen_map.ts";

/** Instances by cluster id, clusters sorted; every list frozen. */
export type ClusterInstances = ReadonlyMap<string, readonly ServiceInstance[]>;

/**
 * Groups `instances` by cluster, clusters sorted, keeping their order within a cluster; frozen through. A list
 * of one cluster that is frozen already is kept as it is, not copied.
 */
export function groupByCluster(instances: readonly ServiceInstance[]): ClusterInstances {
  const first = instances[0]?.endpoint.locality.clusterId;
  let oneCluster = true;
  for (const instance of instances) {
    deepFreeze(instance);
    if (instance.endpoint.locality.clusterId !== first) oneCluster = false;
  }
  if (oneCluster && first !== undefined && Object.isFrozen(instances)) {
    return new FrozenMap([[first, instances]]);
  }
  const grouped = Map.groupBy(instances, (instance) => instance.endpoint.locality.clusterId);
  return new FrozenMap(
    [...grouped.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([c, l]) => [c, Object.freeze(l)]),
  );
}

/**
 * What {@link groupByCluster} would make of `instances`, worked out from `before`, the grouping of the list
 * they replace, when that had one cluster: "same" when the list holds the very instances it did; else the
 * new grouping, and whether its endpoints equal those before (new objects of unchanged workloads, which the
 * caller keeps, so that the next patch finds them by reference); undefined when it cannot be patched
 * (several clusters before or after, or none now).
 *
 * Registries hand back the instances of unchanged workloads as the very objects they did before, frozen, so
 * the common head and tail of the two lists are found by reference; only the run between them is read,
 * compared and frozen. The cost of an event of one workload is reference comparisons along the list, not a
 * deep comparison and a freeze of each instance of the service.
 */
export function patchOneCluster(
  before: ClusterInstances,
  instances: readonly ServiceInstance[],
): { readonly byCluster: ClusterInstances; readonly same: boolean } | "same" | undefined {
  if (before.size !== 1 || instances.length === 0) return undefined;
  const [[cluster, old]] = before;
  if (old === instances) return "same";
  const shorter = Math.min(old.length, instances.length);
  let head = 0;
  while (head < shorter && old[head] === instances[head]) head++;
  let tail = 0;
  while (tail < shorter - head && old[old.length - 1 - tail] === instances[instances.length - 1 - tail]) {
    tail++;
  }
  const oldEnd = old.length - tail;
  const newEnd = instances.length - tail;
  for (let i = head; i < newEnd; i++) {
    if (instances[i].endpoint.locality.clusterId !== cluster) return undefined;
  }
  const same = oldEnd === newEnd && sameRun(old, instances, head, newEnd);
  if (same && head === newEnd) return "same";
  for (let i = head; i < newEnd; i++) deepFreeze(instances[i]);
  const list = Object.isFrozen(instances) ? instances : Object.freeze(instances.slice());
  return { byCluster: new FrozenMap([[cluster, list]]), same };
}

/** True when two groupings hold the same endpoints on the same ports, cluster by cluster, in order. */
export function sameClusterInstances(a: ClusterInstances, b: ClusterInstances): boolean {
  if (a.size !== b.size) return false;
  for (const [cluster, list] of a) {
    const other = b.get(cluster);
    if (!other || other.length !== list.length || !sameRun(list, other, 0, list.length)) return false;
  }
  return true;
}

/** True when `a` and `b` hold equal instances from `from` to `to` (both lists at least that long). */
function sameRun(
  a: readonly ServiceInstance[],
  b: readonly ServiceInstance[],
  from: number,
  to: number,
): boolean {
  for (let i = from; i < to; i++) {
    if (a[i] === b[i]) continue;
    if (a[i].servicePort.port !== b[i].servicePort.port) return false;
    if (!isDeepStrictEqual(a[i].endpoint, b[i].endpoint)) return false;
  }
  return true;
}
