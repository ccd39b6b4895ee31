/**
 * A running count of what peers sent a server, in bytes: the body of every request message and HTTP request
 * received, and a fixed weight for every call that ended. It is what a burst of clients leaves behind once they
 * are gone (decoded requests, closed streams holding the native buffers of their last writes), counted where it
 * enters, so a {@link CollectionAfterBurst} can tell a burst from a quiet server whatever the burst was made of:
 * large messages (delta subscriptions of many names, CSRs, webhook bodies) or many short calls (a stream flood,
 * unary calls).
 *
 * @module
 */

/**
 * What one ended call counts for, in bytes: about what a closed HTTP/2 stream keeps (its objects and the
 * native buffers of its last writes) until a major collection frees it.
 */
export const CALL_WEIGHT_BYTES = 16 * 1024;

/** Where transports report what they received. */
export interface TrafficSink {
  /** `bytes` of one request message or body arrived. */
  received(bytes: number): void;
  /** One call (a stream, a unary call) ended, however it ended. */
  ended(): void;
}

/** Adds up what its sinks were told; the total only grows. */
export class TrafficMeter implements TrafficSink {
  #total = 0;

  /** Bytes received plus {@link CALL_WEIGHT_BYTES} per ended call, since the meter was made. */
  get total(): number {
    return this.#total;
  }

  /** Counts `bytes` received; a negative or non-finite count is ignored. */
  received(bytes: number): void {
    if (bytes > 0 && Number.isFinite(bytes)) this.#total += bytes;
  }

  /** Counts one ended call. */
  ended(): void {
    this.#total += CALL_WEIGHT_BYTES;
  }
}
