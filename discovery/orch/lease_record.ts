/**
 * A `coordination.k8s.io/v1` Lease as leader election reads and writes it, and the calls it makes, kept apart
 * from the orchestrator client so the elector and its tests load without it.
 *
 * @module
 */

/** The spec of a Lease: who holds it, for how long, and since when. */
export interface LeaseRecord {
  /** The holder's identity; empty when released. */
  readonly holderIdentity: string;
  /** How long the holder keeps it after its last renewal. */
  readonly leaseDurationSeconds: number;
  /** When the current holder took it (RFC 3339). */
  readonly acquireTime: string;
  /** When the current holder last renewed it (RFC 3339). */
  readonly renewTime: string;
  /** How many times it changed hands. */
  readonly leaseTransitions: number;
}

/** A Lease as the API server returned it: the record and the version a write must name. */
export interface StoredLease {
  readonly record: LeaseRecord;
  readonly resourceVersion: string;
}

/** A write named a version the API server no longer holds, or a create found the Lease there (409). */
export class LeaseConflictError extends Error {
  /** `lease` is `namespace/name`. */
  constructor(readonly lease: string, options?: ErrorOptions) {
    super(`Lease ${lease} was written by someone else since it was read; read it again`, options);
    this.name = "LeaseConflictError";
  }
}

/** The Lease calls leader election makes. */
export interface LeaseApi {
  /** The Lease, or undefined when there is none (404). */
  get(namespace: string, name: string): Promise<StoredLease | undefined>;
  /**
   * Creates the Lease.
   *
   * @throws {LeaseConflictError} when it exists already
   */
  create(namespace: string, name: string, record: LeaseRecord): Promise<StoredLease>;
  /**
   * Replaces the Lease's record if it is still at `resourceVersion`.
   *
   * @throws {LeaseConflictError} when it is not
   */
  update(namespace: string, name: string, record: LeaseRecord, resourceVersion: string): Promise<StoredLease>;
}
