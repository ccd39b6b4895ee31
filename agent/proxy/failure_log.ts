/**
 * Logs failures of things polled on a schedule (probes, scrapes) once per outage: the first failure and the
 * recovery, not every repeat, so an application that is down for an hour does not write a line every scrape.
 *
 * @module
 */
import type { LogFields, Logger } from "@mesh/shared/log/logger";

/** Remembers which keys are failing and logs only their changes of state. */
export class FailureLog {
  readonly #failing = new Set<string>();

  /** Logs through `log`; `what` names the kind of thing polled, e.g. `metrics source`. */
  constructor(readonly log: Logger, readonly what: string) {}

  /** Records a failure of `key`; logs a warning when `key` was not already failing. */
  failed(key: string, reason: string, fields: LogFields = {}): void {
    if (this.#failing.has(key)) return;
    this.#failing.add(key);
    this.log.warn(`${this.what} ${key} is failing; logged again only once it recovers`, {
      ...fields,
      reason,
    });
  }

  /** Records a success of `key`; logs when `key` was failing. */
  succeeded(key: string, fields: LogFields = {}): void {
    if (this.#failing.delete(key)) this.log.info(`${this.what} ${key} recovered`, fields);
  }
}
