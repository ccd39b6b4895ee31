/**
 * One replica's share of distribution status, as the reference's reporter keeps it: for every mesh resource
 * with a generation (what the orchestrator gave), the first push version whose snapshot holds that generation;
 * from the distribution tracker, how many of this replica's proxies acknowledged that version or a newer one
 * for every type. The report goes to a ConfigMap `<replica>-distribution` in the server's namespace (labelled
 * `internal.mesh.io/distribution-report`), written when it changed and at least every heartbeat so the leader
 * knows the replica lives; a resource every proxy has had for a minute leaves the report (the leader keeps its
 * last count). A write that fails or hangs past its deadline is dropped; the next tick writes again.
 *
 * @module
 */
import { KINDS } from "@mesh/shared/config/kinds";
import type { Resource } from "@mesh/shared/config/resource";
import type { Logger } from "@mesh/shared/log/logger";
import { systemTimers, type Timers } from "@mesh/shared/time/timers";
import type { OrchHttp } from "../orch/orch_http.ts";
import type { StatusRef } from "./status_writer.ts";

/** The label that marks report ConfigMaps, and the data key of the report, as the reference's (renamed). */
export const REPORT_LABEL = "internal.mesh.io/distribution-report";
/** The ConfigMap data key holding the report. */
export const REPORT_FIELD = "distribution-report";

/** One replica's report, as the reference's `DistributionReport`. */
export interface DistributionReport {
  readonly reporter: string;
  readonly dataPlaneCount: number;
  /** `group/version/plural/namespace/name/generation` → proxies of this replica that have it. */
  readonly inProgressResources: Readonly<Record<string, number>>;
}

/** What the reporter reads of the distribution tracker. */
export interface AckCounts {
  /** Per version, connections at it or newer for every type; `total` tracked connections. */
  acknowledged(versions: Iterable<string>): { readonly total: number; readonly acked: Map<string, number> };
}

/** What the reporter reads of a snapshot. */
export interface SnapshotView {
  readonly version: string;
  configs(kind: string): readonly Resource[];
}

/** What the reporter needs. */
export interface DistributionReporterOptions {
  /** This replica's name (`POD_NAME`): the report's `reporter` and its ConfigMap's prefix. */
  readonly reporter: string;
  /** The namespace the reports live in (the server's own). */
  readonly namespace: string;
  readonly tracker: AckCounts;
  readonly http: OrchHttp;
  readonly log: Logger;
  readonly timers?: Timers;
  /** How often the report is built (default 500 ms, as the reference). */
  readonly intervalMs?: number;
  /** The longest time between two writes of an unchanged report (default 10 s). */
  readonly heartbeatMs?: number;
  /** How long a resource every proxy has stays in the report (default 60 s, as the reference). */
  readonly completedKeepMs?: number;
}

interface Entry {
  readonly ref: StatusRef & { readonly generation: number };
  /** The first push version whose snapshot held this generation. */
  readonly version: string;
  /** Since when every proxy has had it, on the timers' clock. */
  completeSince?: number;
}

/** The `group/version/plural/namespace/name/generation` string of a report entry. */
export function resourceString(ref: StatusRef & { readonly generation: number }): string {
  return [ref.group, ref.version, ref.plural, ref.namespace, ref.name, ref.generation].join("/");
}

/** Parses a report entry's resource string; undefined when it is not one. */
export function parseResourceString(text: string): (StatusRef & { readonly generation: number }) | undefined {
  const parts = text.split("/");
  const generation = Number(parts[5]);
  if (parts.length !== 6 || !Number.isSafeInteger(generation) || parts.some((p) => p === "")) {
    return undefined;
  }
  const [group, version, plural, namespace, name] = parts;
  return { group, version, plural, namespace, name, generation };
}

/** Follows snapshots and ACKs and writes this replica's report. */
export class DistributionReporter {
  readonly #options: DistributionReporterOptions;
  readonly #timers: Timers;
  /** `kind/namespace/name` → the generation being tracked. */
  readonly #entries = new Map<string, Entry>();
  #lastVersion: string | undefined;
  #lastWritten = "";
  #lastWriteAt = -Infinity;
  #writing = false;
  #timer: unknown;
  #stopped = false;

  /** Builds the reporter; `start` begins writing. */
  constructor(options: DistributionReporterOptions) {
    this.#options = options;
    this.#timers = options.timers ?? systemTimers;
  }

  /** The report ConfigMap's name. */
  get configMapName(): string {
    return `${this.#options.reporter}-distribution`;
  }

  /** Records what a new snapshot holds (give it every push); the same snapshot again changes nothing. */
  observe(push: SnapshotView): void {
    if (push.version === this.#lastVersion) return;
    this.#lastVersion = push.version;
    const seen = new Set<string>();
    for (const info of KINDS) {
      for (const resource of push.configs(info.kind)) {
        const generation = resource.meta.generation;
        if (generation === undefined) continue;
        const key = `${info.kind}/${resource.meta.namespace}/${resource.meta.name}`;
        seen.add(key);
        if (this.#entries.get(key)?.ref.generation === generation) continue;
        this.#entries.set(key, {
          ref: {
            group: resource.gvk.group,
            version: info.versions.at(-1)!,
            plural: info.plural,
            namespace: resource.meta.namespace,
            name: resource.meta.name,
            generation,
          },
          version: push.version,
        });
      }
    }
    for (const key of this.#entries.keys()) if (!seen.has(key)) this.#entries.delete(key);
  }

  /** The generation of `kind/namespace/name` in the newest snapshot; undefined when it holds none. */
  generationOf(key: string): number | undefined {
    return this.#entries.get(key)?.ref.generation;
  }

  /** Builds the report now, dropping resources every proxy has had for long enough. */
  report(): DistributionReport {
    const { total, acked } = this.#options.tracker.acknowledged(
      new Set([...this.#entries.values()].map((e) => e.version)),
    );
    const now = this.#timers.now();
    const keep = this.#options.completedKeepMs ?? 60_000;
    const inProgress: Record<string, number> = {};
    for (const entry of this.#entries.values()) {
      const count = acked.get(entry.version) ?? 0;
      if (count >= total && total > 0) {
        entry.completeSince ??= now;
        if (now - entry.completeSince > keep) {
          // Gone from the report but kept, so the same generation is not tracked again by the next snapshot.
          continue;
        }
      } else entry.completeSince = undefined;
      inProgress[resourceString(entry.ref)] = count;
    }
    return { reporter: this.#options.reporter, dataPlaneCount: total, inProgressResources: inProgress };
  }

  /** Writes the report every interval until `stop`. */
  start(): void {
    const tick = () => {
      if (this.#stopped) return;
      this.#timer = this.#timers.setTimeout(tick, this.#options.intervalMs ?? 500);
      void this.writeReport();
    };
    tick();
  }

  /** Writes the report when it changed or the heartbeat is due; skipped while a write is still in flight. */
  async writeReport(): Promise<void> {
    if (this.#writing) return;
    const text = JSON.stringify(this.report());
    const now = this.#timers.now();
    if (text === this.#lastWritten && now - this.#lastWriteAt < (this.#options.heartbeatMs ?? 10_000)) return;
    this.#writing = true;
    try {
      await this.#put(text);
      this.#lastWritten = text;
      this.#lastWriteAt = now;
    } catch (error) {
      this.#options.log.debug("distribution report not written", { error: (error as Error).message });
    } finally {
      this.#writing = false;
    }
  }

  /** Stops writing and deletes the report ConfigMap (best effort). */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timers.clearTimeout(this.#timer);
    try {
      await this.#options.http({ method: "DELETE", path: this.#path(this.configMapName) });
    } catch {
      // The leader drops a report it has not heard from in a minute.
    }
  }

  #path(name?: string): string {
    const base = `/api/v1/namespaces/${this.#options.namespace}/configmaps`;
    return name === undefined ? base : `${base}/${name}`;
  }

  async #put(report: string): Promise<void> {
    const body = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: this.configMapName,
        namespace: this.#options.namespace,
        labels: { [REPORT_LABEL]: "true" },
      },
      data: { [REPORT_FIELD]: report },
    };
    let answer = await this.#options.http({ method: "PUT", path: this.#path(this.configMapName), body });
    if (answer.status === 404) {
      answer = await this.#options.http({ method: "POST", path: this.#path(), body });
    }
    if (answer.status < 200 || answer.status > 299) {
      throw new Error(`writing ConfigMap ${this.configMapName} answered ${answer.status}`);
    }
  }
}
