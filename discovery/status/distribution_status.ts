/**
 * Distribution status as one component: this replica's reporter (always, every replica reports its proxies)
 * and the status leader's controller (writes only while the gate leads, through the status writer every status
 * field shares). Built by `server.ts` when `DISCOVERY_ENABLE_STATUS` is on and the orchestrator is read.
 *
 * @module
 */
import type { DutyGate } from "@mesh/shared/lifecycle/duty_gate";
import type { Component } from "@mesh/shared/lifecycle/component";
import type { Logger } from "@mesh/shared/log/logger";
import type { Timers } from "@mesh/shared/time/timers";
import type { OrchHttp } from "../orch/orch_http.ts";
import { DistributionController } from "./distribution_controller.ts";
import { type AckCounts, DistributionReporter, type SnapshotView } from "./distribution_reporter.ts";
import type { StatusWriter } from "./status_writer.ts";
import type { ReplicaLivenessView } from "../model/replica_liveness_view.ts";

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
  /** The writer of every status field; its owner stops it. */
  readonly writer: StatusWriter;
  readonly log: Logger;
  readonly timers?: Timers;
  /** Other replicas' liveness: the report of a replica whose liveness ran out stops counting at once. */
  readonly liveness?: ReplicaLivenessView;
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
  /** Reports what `tracker` says this replica's proxies acknowledged of `snapshots`, and follows the duty. */
  component(deps: () => { readonly tracker: AckCounts; readonly snapshots: SnapshotSource }): Component;
}

/** The longest replica name whose report ConfigMap name (`<name>-distribution`) is still a valid name. */
const MAX_REPORTER_LENGTH = 253 - "-distribution".length;

/**
 * Checks the replica's name; the reporter and controller are built when the component starts.
 *
 * @throws {RangeError} naming `POD_NAME` when it cannot name the report ConfigMap
 */
export function createDistributionStatus(options: DistributionStatusOptions): DistributionStatus {
  const dnsLabel = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
  if (
    options.reporter.length > MAX_REPORTER_LENGTH ||
    !new RegExp(`^${dnsLabel}(\\.${dnsLabel})*$`).test(options.reporter)
  ) {
    throw new RangeError(
      `POD_NAME "${
        options.reporter.slice(0, 64)
      }" cannot name this replica's distribution report: expected ` +
        `a DNS subdomain of lower-case letters, digits, "-" and "." of at most ${MAX_REPORTER_LENGTH} characters`,
    );
  }
  const timers = options.timers ? { timers: options.timers } : {};
  const writer = options.writer;
  let reporter: DistributionReporter | undefined;
  let controller: DistributionController | undefined;
  let unsubscribe: (() => void) | undefined;
  return {
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
          ...(options.liveness ? { liveness: options.liveness } : {}),
          ...timers,
          ...(options.aggregateIntervalMs ? { intervalMs: options.aggregateIntervalMs } : {}),
        });
        own.start();
        controller.start();
      },
      async stop() {
        unsubscribe?.();
        controller?.stop();
        await reporter?.stop();
      },
    }),
  };
}
