import type { Timers } from "../time/timers.ts";

interface Waiter {
  /** Tries to give the connection a slot; true when it got one. */
  readonly place: () => boolean;
  /** Refuses the connection. */
  readonly expire: () => void;
  timer: unknown;
}

/**
 * Connections that found every connection in their scope with a request in progress. Instead of being refused
 * at once, they wait for one of those to end or go idle (`offer`), first come first served per client address,
 * at most `maxWaiting` in all and `deadlineMs` each; past either they are refused. A probe from an address
 * whose connections are all busy with short requests is then served a moment later rather than turned away.
 */
export class SlotWaiters {
  /** Per address, in order of arrival. */
  readonly #queues = new Map<string, Waiter[]>();
  #size = 0;
  #offering = false;

  constructor(readonly maxWaiting: number, readonly deadlineMs: number, readonly timers: Timers) {}

  /** Connections waiting. */
  get size(): number {
    return this.#size;
  }

  /** Queues a connection from `peer`; false (and nothing queued) when `maxWaiting` are already waiting. */
  wait(peer: string, place: () => boolean, expire: () => void): boolean {
    if (this.#size >= this.maxWaiting) return false;
    const waiter: Waiter = { place, expire, timer: undefined };
    waiter.timer = this.timers.setTimeout(() => {
      if (this.#remove(peer, waiter)) expire();
    }, this.deadlineMs);
    const queue = this.#queues.get(peer);
    if (queue) queue.push(waiter);
    else this.#queues.set(peer, [waiter]);
    this.#size++;
    return true;
  }

  /**
   * Offers room to the first waiting connection of each address, and to the next while they get a slot; each
   * address costs one failed try at most, however many of its connections wait.
   */
  offer(): void {
    // Placing one may close an idle connection, which offers room again: the loop in progress covers it.
    if (this.#offering) return;
    this.#offering = true;
    try {
      for (const [peer, queue] of this.#queues) {
        while (queue.length > 0 && queue[0].place()) {
          this.timers.clearTimeout(queue.shift()!.timer);
          this.#size--;
        }
        if (queue.length === 0) this.#queues.delete(peer);
      }
    } finally {
      this.#offering = false;
    }
  }

  /** Refuses every waiting connection. */
  closeAll(): void {
    const queues = [...this.#queues.values()];
    this.#queues.clear();
    this.#size = 0;
    for (const waiter of queues.flat()) {
      this.timers.clearTimeout(waiter.timer);
      waiter.expire();
    }
  }

  #remove(peer: string, waiter: Waiter): boolean {
    const queue = this.#queues.get(peer);
    const at = queue?.indexOf(waiter) ?? -1;
    if (at < 0) return false;
    queue!.splice(at, 1);
    if (queue!.length === 0) this.#queues.delete(peer);
    this.#size--;
    return true;
  }
}
