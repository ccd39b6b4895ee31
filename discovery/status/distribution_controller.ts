/**
 * The status leader's side of distribution status, as the reference's distribution controller: while this
 * replica leads the status duty it reads every replica's report ConfigMap, adds up per resource how many
 * proxies have its generation out of how many there are, and queues the `Reconciled` condition through the
 * status writer when the count changed. A replica not heard from for a minute, or whose liveness Lease ran out
 * (when one is read), no longer counts until it writes its report again; a resource whose object is gone, or
 * whose spec moved past the reported generation, is forgotten. Reading the reports
 * is bounded like every request: a hanging API server delays the next tick, nothing else.
 *
 * @module
 */
import { KINDS } from "@mesh/shared/config/kinds";
import type { DutyGate } from "@mesh/shared/lifecycle/duty_gate";
import type { Logger } from "@mesh/shared/log/logger";
import { systemTimers, type Timers } from "@mesh/shared/time/timers";
import type { OrchHttp } from "../orch/orch_http.ts";
import type { ReplicaLivenessView } from "../model/replica_liveness_view.ts";
import {
  type DistributionReport,
  parseResourceString,
  REPORT_FIELD,
  REPORT_LABEL,
} from "./distribution_reporter.ts";
import { type Progress, reconciledChange } from "./reconciled_condition.ts";
import type { StatusWriter } from "./status_writer.ts";

/** What the controller needs. */
export interface DistributionControllerOptions {
  /** The status duty: the controller works only while it leads. */
  readonly gate: DutyGate;
  /** The namespace of the report ConfigMaps. */
  readonly namespace: string;
  readonly http: OrchHttp;
  readonly writer: StatusWriter;
  /** The generation of `kind/namespace/name` in this replica's newest snapshot (undefined: none). */
  readonly generationOf: (key: string) => number | undefined;
  readonly log: Logger;
  readonly timers?: Timers;
  /** The wall clock stamped on conditions. */
  readonly now?: () => Date;
  /** How often reports are read and status queued (default 1 s). */
  readonly intervalMs?: number;
  /** How long a replica's report counts without a change (default 60 s, as the reference). */
  readonly staleMs?: number;
  /** Replicas' liveness: a report of a replica whose liveness ran out stops counting at once. */
  readonly liveness?: ReplicaLivenessView;
  /** How often the reporters' liveness is read (default 5 s). */
  readonly livenessCheckMs?: number;
}

interface ReporterState {
  readonly resourceVersion: string;
  readonly observedAt: number;
}

type ConfigMapList = {
  items?: {
    metadata?: { name?: string; resourceVersion?: string; labels?: Record<string, string> };
    data?: Record<string, string>;
  }[];
};

/** A report as a replica writes it; undefined when the text is not one. */
function readReport(text: string | undefined): DistributionReport | undefined {
  let report: Partial<DistributionReport> | null;
  try {
    report = JSON.parse(text ?? "");
  } catch {
    return undefined;
  }
  const counts = report?.inProgressResources;
  if (
    typeof report?.reporter !== "string" || typeof report.dataPlaneCount !== "number" ||
    counts === null || typeof counts !== "object" || Object.values(counts).some((n) => typeof n !== "number")
  ) return undefined;
  return report as DistributionReport;
}

/** Aggregates the replicas' reports and writes each resource's `Reconciled` condition while leading. */
export class DistributionController {
  readonly #options: DistributionControllerOptions;
  readonly #timers: Timers;
  /** resource string → reporter → its proxies' progress. */
  readonly #state = new Map<string, Map<string, Progress>>();
  readonly #reporters = new Map<string, ReporterState>();
  /** Reporter → the report version it was dropped at: the same report is not counted again. */
  readonly #dropped = new Map<string, string>();
  #livenessReadAt = -Infinity;
  /** Report ConfigMap name → the resourceVersion last found unreadable, so each bad version is logged once. */
  readonly #unreadable = new Map<string, string>();
  /** resource string → the progress last queued, so an unchanged count is not written again. */
  readonly #queued = new Map<string, string>();
  readonly #kindOfPlural = new Map(KINDS.map((k) => [k.plural, k.kind]));
  #stopGate: (() => void) | undefined;

  /** Builds the controller; `start` follows the duty. */
  constructor(options: DistributionControllerOptions) {
    this.#options = options;
    this.#timers = options.timers ?? systemTimers;
  }

  /** Runs while the duty is led: each time it is won, state is read afresh and every resource checked once. */
  start(): void {
    this.#stopGate = this.#options.gate.whileLeading((signal) => {
      this.#state.clear();
      this.#reporters.clear();
      this.#dropped.clear();
      this.#queued.clear();
      this.#livenessReadAt = -Infinity;
      let timer: unknown;
      const loop = async () => {
        if (signal.aborted) return;
        await this.tick(signal);
        if (!signal.aborted) timer = this.#timers.setTimeout(loop, this.#options.intervalMs ?? 1_000);
      };
      signal.addEventListener("abort", () => this.#timers.clearTimeout(timer), { once: true });
      void loop();
    });
  }

  /** Stops following the duty. */
  stop(): void {
    this.#stopGate?.();
  }

  /** Reads the reports once and queues the writes they call for, dropped once `signal` (the duty) aborts. */
  async tick(signal?: AbortSignal): Promise<void> {
    try {
      const answer = await this.#options.http({
        method: "GET",
        path: `/api/v1/namespaces/${this.#options.namespace}/configmaps?labelSelector=${
          encodeURIComponent(`${REPORT_LABEL}=true`)
        }`,
      });
      if (answer.status === 200) this.#read(answer.body as ConfigMapList);
      else this.#options.log.debug("distribution reports not read", { status: answer.status });
    } catch (error) {
      this.#options.log.debug("distribution reports not read", { error: (error as Error).message });
    }
    this.#dropStale();
    await this.#dropExpired();
    if (signal?.aborted) return;
    this.#queueWrites(signal);
  }

  /** Adds one replica's report, as read from its ConfigMap. */
  handleReport(report: DistributionReport): void {
    for (const [resource, acked] of Object.entries(report.inProgressResources)) {
      let byReporter = this.#state.get(resource);
      if (byReporter === undefined) this.#state.set(resource, byReporter = new Map());
      byReporter.set(report.reporter, { acked, total: report.dataPlaneCount });
    }
  }

  #read(list: ConfigMapList): void {
    const now = this.#timers.now();
    for (const item of list.items ?? []) {
      if (item.metadata?.labels?.[REPORT_LABEL] !== "true") continue;
      const rv = item.metadata?.resourceVersion ?? "";
      const report = readReport(item.data?.[REPORT_FIELD]);
      if (report === undefined) {
        const name = item.metadata?.name ?? "";
        if (this.#unreadable.get(name) !== rv) {
          this.#unreadable.set(name, rv);
          this.#options.log.warn("distribution report unreadable; skipped", {
            configMap: name,
            resourceVersion: rv,
          });
        }
        continue;
      }
      this.#unreadable.delete(item.metadata?.name ?? "");
      if (this.#reporters.get(report.reporter)?.resourceVersion === rv) continue;
      if (this.#dropped.get(report.reporter) === rv) continue;
      this.#dropped.delete(report.reporter);
      this.#reporters.set(report.reporter, { resourceVersion: rv, observedAt: now });
      this.handleReport(report);
    }
  }

  #dropStale(): void {
    const now = this.#timers.now();
    for (const [reporter, state] of this.#reporters) {
      if (now - state.observedAt <= (this.#options.staleMs ?? 60_000)) continue;
      this.#options.log.warn("status reporter not heard from; its report no longer counts", { reporter });
      this.#drop(reporter, state);
    }
  }

  /** Drops the reports of replicas whose liveness ran out; a replica whose liveness cannot be read counts. */
  async #dropExpired(): Promise<void> {
    const liveness = this.#options.liveness;
    const now = this.#timers.now();
    if (liveness === undefined || now - this.#livenessReadAt < (this.#options.livenessCheckMs ?? 5_000)) {
      return;
    }
    this.#livenessReadAt = now;
    liveness.retain(new Set(this.#reporters.keys()));
    for (const [reporter, state] of [...this.#reporters]) {
      let expired: boolean;
      try {
        expired = (await liveness.expiry(reporter)).expired;
      } catch (error) {
        this.#options.log.debug("status reporter's liveness not read", {
          reporter,
          error: (error as Error).message,
        });
        continue;
      }
      if (!expired || this.#reporters.get(reporter) !== state) continue;
      this.#options.log.warn("status reporter's liveness ran out; its report no longer counts", { reporter });
      this.#drop(reporter, state);
    }
  }

  #drop(reporter: string, state: ReporterState): void {
    this.#reporters.delete(reporter);
    this.#dropped.set(reporter, state.resourceVersion);
    for (const byReporter of this.#state.values()) byReporter.delete(reporter);
  }

  #queueWrites(signal?: AbortSignal): void {
    for (const [resource, byReporter] of this.#state) {
      const ref = parseResourceString(resource);
      const kind = ref && this.#kindOfPlural.get(ref.plural);
      const current = kind && this.#options.generationOf(`${kind}/${ref.namespace}/${ref.name}`);
      if (ref === undefined || current === undefined || current > ref.generation) {
        this.#state.delete(resource);
        this.#queued.delete(resource);
        continue;
      }
      if (current < ref.generation) continue;
      let acked = 0;
      let total = 0;
      for (const progress of byReporter.values()) {
        acked += progress.acked;
        total += progress.total;
      }
      if (total === 0) continue;
      const said = `${acked}/${total}`;
      if (this.#queued.get(resource) === said) continue;
      this.#queued.set(resource, said);
      this.#options.writer.write(
        ref,
        "Reconciled",
        reconciledChange({ acked, total }, ref.generation, this.#options.now ?? (() => new Date())),
        signal,
      );
    }
  }
}
