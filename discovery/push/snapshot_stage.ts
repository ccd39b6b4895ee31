import type { Logger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import type { PushContext } from "./push_context.ts";
import type { PushRequest } from "./push_request.ts";
import { HttpRoutesAloneMarker } from "./http_routes_alone.ts";
import type { EndpointSnapshot } from "./endpoint_snapshot.ts";
import type { SyncGate } from "./sync_gate.ts";

/** Receives each debounced request with the snapshot to push from (the xDS server's push queue). */
export type PushListener = (request: PushRequest, push: PushContext) => void | Promise<void>;

/** Options of the snapshot stage. */
export interface SnapshotStageOptions {
  /** Builds a snapshot of the current state (a closure over `buildPushContext` and its inputs). */
  readonly build: () => PushContext;
  /** The endpoints as of now, for endpoint-only requests; absent, they push the current snapshot as it is. */
  readonly endpoints?: () => EndpointSnapshot;
  /** Where failed builds and failing listeners are logged. */
  readonly log: Logger;
  /** Where build errors, service counts and push problems are recorded; none when absent. */
  readonly metrics?: Metrics;
  /** Told when each build begins and ends, to open once a snapshot holds every source; none when absent. */
  readonly gate?: SyncGate;
  /** Gives the event loop a turn (a zero-delay timer by default; tests may pass their own). */
  readonly turn?: () => Promise<void>;
}

const loopTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/**
 * The pipeline stage between the debouncer and the push queue: a full request builds a new PushContext (a
 * failed build keeps the previous one and counts `discovery_xds_push_context_errors`); every request then goes
 * to the listeners with the current snapshot, marked {@link PushRequest.httpRoutesAlone} when its
 * VirtualService changes cannot change a sidecar's listeners ({@link HttpRoutesAloneMarker}). An
 * endpoint-only request gets a copy of the current snapshot with the endpoints as of now: a published
 * snapshot never changes, its endpoints included.
 *
 * A full request runs in two turns of the event loop: the build, then the publication (gauges, cache
 * invalidation and queueing by the listeners). Each costs tens of milliseconds at thousands of services; in
 * one turn together they held the loop past the 50 ms bound. A snapshot is published whole or not at all:
 * `current()` and the listeners change together, in the second turn.
 */
export class SnapshotStage {
  readonly #options: SnapshotStageOptions;
  readonly #handlers = new Set<PushListener>();
  #current: PushContext;
  readonly #httpRoutes: HttpRoutesAloneMarker;

  /** Builds the first snapshot at once. */
  constructor(options: SnapshotStageOptions) {
    this.#options = options;
    const complete = options.gate?.buildStarting() ?? true;
    this.#current = options.build();
    options.gate?.built(complete, true);
    this.#httpRoutes = new HttpRoutesAloneMarker(this.#current.virtualServiceIndex);
    this.#record(this.#current);
  }

  /** The latest snapshot. */
  current(): PushContext {
    return this.#current;
  }

  /** Subscribes to pushes; returns a function that unsubscribes. */
  onPush(listener: PushListener): () => void {
    this.#handlers.add(listener);
    return () => this.#handlers.delete(listener);
  }

  /** Handles one debounced request; give this to the PushDebouncer. Resolves when every listener has. */
  handle = async (request: PushRequest): Promise<void> => {
    if (request.full) {
      const complete = this.#options.gate?.buildStarting() ?? true;
      const built = this.#build();
      if (built === undefined) this.#options.gate?.built(complete, false);
      else {
        await (this.#options.turn ?? loopTurn)();
        this.#publish(built);
        this.#options.gate?.built(complete, true);
        // Decided once per push, for every proxy, where every published snapshot passes.
        request = this.#httpRoutes.published(request, built.virtualServiceIndex);
      }
    } else if (this.#options.endpoints !== undefined) {
      this.#current = this.#current.withEndpoints(this.#options.endpoints());
    }
    const push = this.#current;
    await Promise.all([...this.#handlers].map(async (handler) => {
      try {
        await handler(request, push);
      } catch (error) {
        this.#options.log.error("push listener failed", {
          error: (error as Error)?.message ?? String(error),
        });
      }
    }));
  };

  #build(): PushContext | undefined {
    try {
      return this.#options.build();
    } catch (error) {
      this.#options.metrics?.counter("discovery_xds_push_context_errors").inc();
      this.#options.log.error("building the push context failed; the previous snapshot stays", {
        error: (error as Error)?.message ?? String(error),
      });
      return undefined;
    }
  }

  /**
   * Makes `built` the current snapshot. Endpoint-only requests are not serialized with full ones (with
   * `DISCOVERY_ENABLE_EDS_DEBOUNCE` off): one handled during the build's turn may have published newer
   * endpoints than `built` holds, and those are kept.
   */
  #publish(built: PushContext): void {
    const previous = this.#current;
    this.#current = previous.endpointIndex.generation > built.endpointIndex.generation
      ? built.withEndpoints(previous.endpointIndex)
      : built;
    this.#record(this.#current, previous);
  }

  #record(push: PushContext, previous?: PushContext): void {
    const metrics = this.#options.metrics;
    if (!metrics) return;
    metrics.gauge("discovery_services").set(push.services().length);
    metrics.gauge("discovery_virt_services").set(push.virtualServiceIndex.all.length);
    push.problems.record(metrics, previous?.problems);
  }
}
