/**
 * How long a slice of work runs before the event loop gets a turn, by default. A request crosses several turns
 * (the connection guard relays it to the internal server and back), each waiting behind a slice.
 */
export const DEFAULT_SLICE_MS = 2;

/**
 * Cuts a long run of synchronous steps into slices of the event loop: {@link LoopSlices.pause} returns at once
 * while the current slice has time left, and otherwise lets pending I/O and timers run first, so a large batch
 * (thousands of resources written to the store) never holds the loop for much longer than one slice.
 */
export class LoopSlices {
  readonly #sliceMs: number;
  readonly #now: () => number;
  #started: number;

  /** Slices of `sliceMs` of work, measured with `now` (a monotonic clock in ms). */
  constructor(sliceMs = DEFAULT_SLICE_MS, now: () => number = () => performance.now()) {
    this.#sliceMs = sliceMs;
    this.#now = now;
    this.#started = now();
  }

  /** Resolves now while the slice has time left, else after a turn of the event loop (a new slice starts). */
  async pause(): Promise<void> {
    if (this.#now() - this.#started < this.#sliceMs) return;
    await new Promise<void>((resolve) => setTimeout(resolve, 0));
    this.#started = this.#now();
  }
}
