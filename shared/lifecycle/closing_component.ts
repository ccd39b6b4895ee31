import type { Component } from "./component.ts";

/** What undoes one step of a start: closes a server, removes a listener. */
export type Closer = () => void | Promise<void>;

/**
 * A component whose start builds something and returns what undoes it, step by step (a pipeline and the
 * subscriptions that feed it); stop runs those closers in reverse order.
 */
export function closingComponent(name: string, start: () => Closer[] | Promise<Closer[]>): Component {
  let closers: Closer[] = [];
  return {
    name,
    start: async () => {
      closers = await start();
    },
    stop: async () => {
      for (const close of closers.reverse()) await close();
    },
  };
}
