/**
 * A list of subscribers to one kind of event. Handlers run synchronously in subscription order; a handler
 * that throws does not stop the others (the error goes to `onError`).
 */
export class Listeners<E> {
  readonly #handlers = new Set<(event: E) => void>();

  constructor(private readonly onError: (error: unknown) => void = () => {}) {}

  /** Subscribes; returns a function that unsubscribes. */
  add(handler: (event: E) => void): () => void {
    // A wrapper makes the same function subscribable twice, each with its own unsubscribe.
    const wrapped = (event: E) => handler(event);
    this.#handlers.add(wrapped);
    return () => this.#handlers.delete(wrapped);
  }

  /** Delivers `event` to every subscriber. */
  emit(event: E): void {
    for (const handler of [...this.#handlers]) {
      try {
        handler(event);
      } catch (error) {
        this.onError(error);
      }
    }
  }

  /** Number of subscribers. */
  get size(): number {
    return this.#handlers.size;
  }
}
