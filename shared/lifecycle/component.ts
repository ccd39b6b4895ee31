/** A part of a program with a lifetime: started once, in its place in a list, and stopped in reverse order. */
export interface Component {
  /** Names the component in readiness reasons and startup errors. */
  readonly name: string;
  /** Starts it; resolves once it serves (a listener is bound, a first load is done). */
  start(): void | Promise<void>;
  /** Stops it; called only after `start` resolved. */
  stop(): void | Promise<void>;
  /** Why it is not ready yet, or undefined when it is; absent when started means ready. */
  ready?(): string | undefined;
}

/** One component that is not ready, and why. */
export interface NotReady {
  readonly name: string;
  readonly reason: string;
}
