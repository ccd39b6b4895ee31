/**
 * `/debug/clusterz`: the clusters a discovery server reads services and endpoints from, as the reference's
 * later releases list them: the server's own cluster first, then every remote cluster read from a Secret with
 * its sync state.
 *
 * @module
 */
import type { RemoteClusterStatus } from "../orch/remote_clusters.ts";
import type { AggregateRegistry } from "../registry/aggregate_registry.ts";

/** What `/debug/clusterz` answers. */
export interface ClusterzView {
  /** The cluster the server runs in, and whether its registries have synced. */
  readonly local: {
    readonly clusterId: string;
    readonly state: "synced" | "syncing";
    /** Local registries not synced yet, as `provider/clusterId`. */
    readonly unsynced: readonly string[];
  };
  /** Remote clusters, sorted by id. */
  readonly remote: readonly RemoteClusterStatus[];
}

/** The clusterz answer from the aggregate (local sync state) and the remote clusters' status. */
export function clusterzView(
  aggregate: AggregateRegistry,
  remote: readonly RemoteClusterStatus[],
): ClusterzView {
  const unsynced = aggregate.unsyncedRegistries();
  return {
    local: { clusterId: aggregate.clusterId, state: unsynced.length === 0 ? "synced" : "syncing", unsynced },
    remote,
  };
}
