/**
 * Distribution status as one component: this replica's reporter (always, every replica reports its proxies),
 * the status leader's controller (writes only while the gate leads) and the status writer they and the
 * analyzers share. Built by `server.ts` when `DISCOVERY_ENABLE_STATUS` is on and the orchestrator is read.
 *
 * @module
 */
import type { DutyGate } from "../../shared/lifecycle/duty_gate.ts";
import type { Component } from "../../shared/lifecycle/component.ts";
import type { Logger } from "../../shared/log/logger.ts";
import type { Timers } from "../../shared/time/timers.ts";
import type { OrchHttp } from "../orch/orch_http.ts";
import { DistributionController } from "./distribution_controller.ts";
import { type AckCounts, DistributionReporter, type SnapshotView } from "./distribution_reporter.ts";
import { StatusWriter } from "./status_writer.ts";

/** The longest one status request may take before it counts as failed. */
export const STATUS_REQUEST_TIMEOUT_MS = 5_000;

/** What distribution status needs. */
export interface DistributionStatusOptions {
  /** Requests to the orchestrator, each bounded by {@link STATUS_REQUEST_TIMEOUT_MS}. */
  readonly http: OrchHttp;
  /** The status duty. */
  readonly gate: DutyGate;
  /** This replica's name (`POD_NAME`). */
  readonly reporter: string;
  /** The server's namespace, where the reports are kept. */
  readonly namespace: string;
  /** `DISCOVERY_STATUS_QPS` and `DISCOVERY_STATUS_BURST`. */
  readonly qps: number;
  readonly burst: number;
  readonly log: Logger;
  readonly timers?: Timers;
  /** Report and aggregation intervals (the reference's 500 ms and our 1 s by default). */
  readonly reportIntervalMs?: number;
  readonly aggregateIntervalMs?: number;
}

/** What the status component reads of the push pipeline. */
export interface SnapshotSource {
  /** The newest snapshot. */
  current(): SnapshotView;
  /** Subscribes to pushes; returns a function that unsubscribes. */
  onPush(listener: (request: unknown, push: SnapshotView) => void): () => void;
}

/** The parts of distribution status. */
export interface DistributionStatus {
  /** The status writer, for other status fields (`writeField`). */
  readonly writer: StatusWriter;
  /** Reports what `tracker` says this replica's proxies acknowledged of `snapshots`, and follows the duty. */
  component(deps: () => { readonly tracker: AckCounts; readonly snapshots: SnapshotSource }): Component;
}

/** Builds the writer; the reporter and controller are built when the component starts. */
export function createDistributionStatus(options: DistributionStatusOptions): DistributionStatus {
  const timers = options.timers ? { timers: options.timers } : {};
  const writer = new StatusWriter({
    http: options.http,
    qps: options.qps,
    burst: options.burst,
    log: options.log,
    ...timers,
  });
  let reporter: DistributionReporter | undefined;
  let controller: DistributionController | undefined;
  let unsubscribe: (() => void) | undefined;
  return {
    writer,
    component: (deps) => ({
      name: "status",
      start() {
        const { tracker, snapshots } = deps();
        const own = new DistributionReporter({
          reporter: options.reporter,
          namespace: options.namespace,
          tracker,
          http: options.http,
          log: options.log,
          ...timers,
          ...(options.reportIntervalMs ? { intervalMs: options.reportIntervalMs } : {}),
        });
        reporter = own;
        own.observe(snapshots.current());
        unsubscribe = snapshots.onPush((_request, push) => own.observe(push));
        controller = new DistributionController({
          gate: options.gate,
          namespace: options.namespace,
          http: options.http,
          writer,
          generationOf: (key) => own.generationOf(key),
          log: options.log,
          ...timers,
          ...(options.aggregateIntervalMs ? { intervalMs: options.aggregateIntervalMs } : {}),
        });
        own.start();
        controller.start();
      },
      async stop() {
        unsubscribe?.();
        controller?.stop();
        writer.stop();
        await reporter?.stop();
      },
    }),
  };
}
