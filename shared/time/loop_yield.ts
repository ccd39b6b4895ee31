/**
 * Yielding to the event loop between slices of work in a way that lets sockets in. On Deno (2.9.3) a callback
 * queued with `setImmediate` runs on the next turn of the loop, but while immediates stay queued the loop
 * wakes itself and its I/O driver is polled only once every few dozen turns: a chain of immediates, each
 * running a slice of work, holds new connections and requests (a kubelet's `/ready`) back for as many slices.
 * A zero timer makes the loop wait on its I/O driver, at the price of about a millisecond each, so
 * {@link pollingYield} uses immediates and, once `pollEveryMs` have passed since the loop last waited, a
 * timer.
 *
 * @module
 */
import { setImmediate } from "node:timers";

/** Lets the event loop run (I/O included) before calling `next`. */
export type YieldToLoop = (next: () => void) => void;

/** At most this long between two waits of the loop on its I/O driver while slices of work follow each other. */
export const DEFAULT_POLL_EVERY_MS = 20;

/**
 * A {@link YieldToLoop} for one chain of slices: the next slice runs after an immediate, or after a zero
 * timer once `pollEveryMs` (on `now`, monotonic milliseconds) have passed since the last one.
 */
export function pollingYield(
  now: () => number = () => performance.now(),
  pollEveryMs = DEFAULT_POLL_EVERY_MS,
): YieldToLoop {
  let polledAt = now();
  return (next) => {
    if (now() - polledAt < pollEveryMs) {
      setImmediate(next);
      return;
    }
    setTimeout(() => {
      polledAt = now();
      next();
    }, 0);
  };
}
