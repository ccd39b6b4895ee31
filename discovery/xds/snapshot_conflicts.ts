import type { Metrics } from "@mesh/shared/metrics/metrics";
import {
  type ConflictMetric,
  type ConflictSink,
  LISTENER_BLIND_KINDS,
  ListenerConflicts,
} from "../push/listener_conflicts.ts";
import { changedKindsOf, onlyKinds, type PushRequest } from "../push/push_request.ts";

/**
 * The listener conflicts of the newest snapshot, kept by the xDS server beside it (a published snapshot is
 * never written): the generators report them through the request, and a new snapshot version starts them
 * afresh, except after a change listeners cannot see, which keeps the listeners and so the conflicts.
 */
export class SnapshotConflicts implements ConflictSink {
  readonly #metrics?: Metrics;
  #version?: string;
  #current = new ListenerConflicts();

  /** Conflicts of no snapshot yet; their gauges go to `metrics` when given. */
  constructor(metrics?: Metrics) {
    if (metrics !== undefined) this.#metrics = metrics;
  }

  /** Snapshot `version` is the newest, pushed for `request`: a new version's conflicts start afresh. */
  snapshot(version: string, request?: PushRequest): void {
    if (version === this.#version) return;
    const previous = this.#current;
    this.#version = version;
    this.#current = new ListenerConflicts();
    if (request?.full === true && onlyKinds(changedKindsOf(request), LISTENER_BLIND_KINDS)) {
      this.#current.inherit(previous);
    }
    if (this.#metrics !== undefined) this.#current.bind(this.#metrics);
  }

  /** Records one conflict of the newest snapshot. */
  add(metric: ConflictMetric, key: string): void {
    this.#current.add(metric, key);
  }

  /** The newest snapshot's recorded conflicts of `metric`, sorted. */
  keys(metric: ConflictMetric): string[] {
    return this.#current.keys(metric);
  }
}
