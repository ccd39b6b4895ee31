import type { Component, NotReady } from "./component.ts";

/** A component's start failed; what started before it was stopped. The message is the cause's own. */
export class ComponentStartError extends Error {
  /** The component whose start failed. */
  readonly component: string;

  constructor(component: string, cause: unknown) {
    super(cause instanceof Error ? cause.message : `Component "${component}" failed to start: ${cause}`, {
      cause,
    });
    this.name = "ComponentStartError";
    this.component = component;
  }
}

/** A readiness condition in the shape `Readiness` checks take: why it is not met, or undefined. */
export interface ComponentCheck {
  readonly name: string;
  check(): string | undefined;
}

/**
 * Runs a list of components: starts them in order, stops them in reverse, and derives readiness from them. A
 * component that has not started yet is not ready, so readiness cannot pass before the last listener in the
 * list is bound.
 */
export class Lifecycle {
  readonly #components: readonly Component[];
  readonly #started: Component[] = [];
  #stopping: Promise<void> | undefined;

  constructor(components: readonly Component[]) {
    const names = new Set<string>();
    for (const c of components) {
      if (names.has(c.name)) {
        throw new RangeError(`Component name "${c.name}" is listed twice; names are unique`);
      }
      names.add(c.name);
    }
    this.#components = components;
  }

  /**
   * Starts every component in list order. When one fails, those already started are stopped in reverse order
   * and a ComponentStartError naming it is thrown with the failure as its cause.
   */
  async start(): Promise<void> {
    if (this.#started.length > 0 || this.#stopping) {
      throw new Error("Lifecycle.start called twice; start once");
    }
    for (const component of this.#components) {
      try {
        await component.start();
      } catch (error) {
        await this.stop().catch(() => {});
        throw new ComponentStartError(component.name, error);
      }
      this.#started.push(component);
    }
  }

  /**
   * Stops every started component in reverse start order, each even when an earlier stop failed; rejects with
   * an AggregateError of the failures. Calling it again returns the same promise.
   */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      const failures: unknown[] = [];
      for (const component of [...this.#started].reverse()) {
        try {
          await component.stop();
        } catch (error) {
          failures.push(error);
        }
      }
      if (failures.length > 0) {
        throw new AggregateError(failures, `${failures.length} component(s) failed to stop`);
      }
    })();
    return this.#stopping;
  }

  /** The components that are not ready, in list order: not started yet, or started and `ready()` says why. */
  notReady(): NotReady[] {
    const result: NotReady[] = [];
    for (const check of this.checks()) {
      const reason = check.check();
      if (reason !== undefined) result.push({ name: check.name, reason });
    }
    return result;
  }

  /** One readiness condition per component, in list order, for a readiness evaluator. */
  checks(): ComponentCheck[] {
    return this.#components.map((component) => ({
      name: component.name,
      check: () => this.#started.includes(component) ? component.ready?.() : "not started yet",
    }));
  }
}
