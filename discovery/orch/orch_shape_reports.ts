/**
 * Reports what checking the shape of orchestrator objects left out (`orch_shape_reader.ts`): one warning per
 * object a minute at most, naming kind, namespace/name and the paths at fault, so an object rewritten in a loop
 * costs one line a minute; an object refused whole is also counted in `discovery_total_rejected_configs`.
 *
 * @module
 */
import type { Logger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import { PEER_LOG_PERIOD_MS, PeerLogLimiter } from "@mesh/shared/log/peer_log_limiter";
import type { Shaped } from "./orch_shape_reader.ts";

/** `namespace/name` of a raw object for a log line, quoting at most 100 characters of either. */
export function objectName(raw: unknown): string {
  const meta = (raw as { metadata?: { namespace?: unknown; name?: unknown } } | null)?.metadata;
  const part = (v: unknown) =>
    (typeof v === "string" ? v : v === undefined ? "" : JSON.stringify(v) ?? "")
      .slice(0, 100);
  return `${part(meta?.namespace)}/${part(meta?.name)}`;
}

/** Logs and counts the problems of shaped objects. */
export class ShapeReports {
  readonly #log: Logger;
  readonly #metrics: Metrics | undefined;
  readonly #limiter: PeerLogLimiter;

  /** Logs to `log`, counts in `metrics`, rate-limits by `now` (ms). */
  constructor(log: Logger, metrics: Metrics | undefined, now: () => number) {
    this.#log = log;
    this.#metrics = metrics;
    this.#limiter = new PeerLogLimiter(PEER_LOG_PERIOD_MS, now);
  }

  /** Reports `shaped`, the check of `raw` (a `kind`), when it found anything. */
  report(kind: string, raw: unknown, shaped: Shaped<unknown>): void {
    const refused = shaped.object === undefined;
    if (refused) this.#metrics?.counter("discovery_total_rejected_configs").inc({ type: kind });
    if (shaped.problems.length === 0) return;
    const object = objectName(raw);
    const passedOver = this.#limiter.take(`${kind} ${object}`);
    if (passedOver === undefined) return;
    const fields = {
      kind,
      object,
      problems: shaped.problems.join("; "),
      ...(shaped.more > 0 && { moreProblems: shaped.more }),
      ...(passedOver > 0 && { notLogged: passedOver }),
    };
    if (refused) this.#log.warn("orchestrator object refused: it cannot be read", fields);
    else this.#log.warn("orchestrator object read without the fields of the wrong shape", fields);
  }
}
