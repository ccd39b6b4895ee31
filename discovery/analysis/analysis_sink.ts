/**
 * Where analysis results go: each run publishes every message, by resource. The debug interface reads the
 * in-memory sink; the status writer (orchestrator mode, leader only) implements the same interface to write
 * each resource's `status.validationMessages`.
 * @module
 */
import type { AnalysisMessage } from "./analysis_message.ts";

/** Messages by resource key (`Kind/namespace/name`); a resource that is absent has no messages. */
export type MessagesByResource = ReadonlyMap<string, readonly AnalysisMessage[]>;

/** Receives the complete result of every analysis run. */
export interface AnalysisSink {
  /** The run's messages, complete: a resource absent from the map has none (any earlier ones are cleared). */
  publish(messagesByResource: MessagesByResource): void | Promise<void>;
}

/** What the in-memory sink shows: the last result and when it came. */
export interface AnalysisView {
  /** Runs published so far. */
  readonly runs: number;
  /** When the last result was published, as RFC 3339 text; absent before the first. */
  readonly publishedAt?: string;
  /** Every message of the last result, by resource key. */
  readonly resources: Readonly<Record<string, readonly AnalysisMessage[]>>;
}

/** Keeps the last result in memory for the debug interface. */
export class MemoryAnalysisSink implements AnalysisSink {
  readonly #wallClock: () => Date;
  #last: MessagesByResource = new Map();
  #runs = 0;
  #publishedAt: string | undefined;

  /** `wallClock` stamps each result (the time shown, not used for scheduling). */
  constructor(wallClock: () => Date = () => new Date()) {
    this.#wallClock = wallClock;
  }

  publish(messagesByResource: MessagesByResource): void {
    this.#last = messagesByResource;
    this.#runs++;
    this.#publishedAt = this.#wallClock().toISOString();
  }

  /** The messages of one resource in the last result. */
  messagesFor(kind: string, namespace: string, name: string): readonly AnalysisMessage[] {
    return this.#last.get(`${kind}/${namespace}/${name}`) ?? [];
  }

  /** The last result, for `/debug/analyzez`. */
  view(): AnalysisView {
    return {
      runs: this.#runs,
      ...(this.#publishedAt !== undefined && { publishedAt: this.#publishedAt }),
      resources: Object.fromEntries([...this.#last].sort(([a], [b]) => a.localeCompare(b))),
    };
  }
}
