/**
 * What one replica can tell of another's liveness, as the orchestrator's `ReplicaLiveness` judges it from the
 * replica's Lease; the writers that clean up after a dead replica read it through this view.
 *
 * @module
 */

/** Where a replica's liveness stands, as the reader judges it now. */
export interface ReplicaExpiry {
  /** True once the replica stopped renewing its liveness for longer than it promised. */
  readonly expired: boolean;
  /** When it ran out, or the earliest it can run out if it is not renewed again (wall-clock ms). */
  readonly at: number;
}

/** Other replicas' liveness. */
export interface ReplicaLivenessView {
  /**
   * Whether `replica` stopped renewing its liveness, and since when.
   *
   * @throws when it cannot be told (nothing is judged then)
   */
  expiry(replica: string): Promise<ReplicaExpiry>;
  /** Forgets what it knows of replicas other than `replicas`. */
  retain(replicas: ReadonlySet<string>): void;
}
