import type { PushRequest, TriggerReason } from "./push_request.ts";

/**
 * Push requests merged as they arrive, as `mergePushRequests` merges them, into one mutable
 * accumulator: merging each request into a new frozen request copied the growing `configsUpdated` set every
 * time, so a burst of n changes (thousands of resources written at once) cost O(n²).
 */
export class PendingPush {
  #full = false;
  /** Undefined once some request meant "anything may have changed". */
  #configs: Set<string> | undefined = new Set();
  readonly #reasons: Partial<Record<TriggerReason, number>> = {};
  #start = Infinity;
  #count = 0;

  /** Merges `request` in. */
  add(request: PushRequest): void {
    this.#count++;
    this.#full ||= request.full;
    if (request.configsUpdated === undefined) this.#configs = undefined;
    else if (this.#configs !== undefined) {
      for (const key of request.configsUpdated) {
        this.#configs.add(key);
      }
    }
    for (const [reason, count] of Object.entries(request.reasons) as [TriggerReason, number][]) {
      this.#reasons[reason] = (this.#reasons[reason] ?? 0) + count;
    }
    this.#start = Math.min(this.#start, request.start);
  }

  /** The merged request; undefined when nothing was added. The accumulator should not be added to after. */
  build(): PushRequest | undefined {
    if (this.#count === 0) return undefined;
    return Object.freeze({
      full: this.#full,
      ...(this.#configs ? { configsUpdated: Object.freeze(this.#configs) } : {}),
      reasons: Object.freeze({ ...this.#reasons }),
      start: this.#start,
    });
  }
}
