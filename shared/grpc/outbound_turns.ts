/**
 * Turns per HTTP/2 connection: the callers of one connection run one at a time, in arrival order, each until
 * it ends its turn. Used at two levels, each with its own instance. Streams hand the transport their slices
 * in turns, each once the socket has written the one before: a slice's pacing looks at the connection's
 * socket, so without turns every stream of a connection counted the others' bytes as its own and handed its
 * next slice early, and a hundred streams of one connection each held their whole response in the runtime's
 * HTTP/2 buffers, which the runtime keeps for as long as the stream lives. With turns a connection holds at
 * most one slice the socket has not written, however many streams it carries, and a connection whose peer
 * does not read gets no new bytes until it has taken what it was sent. ADS responses take a turn of their
 * connection before a response-gate permit, so one connection holds one permit whatever its streams.
 *
 * @module
 */
import { baseServerCall } from "./base_server_call.ts";

/** Ends a turn; idempotent. */
export type EndTurn = () => void;

interface Queue {
  busy: boolean;
  readonly waiting: ((end: EndTurn) => void)[];
}

/** The connection (HTTP/2 session) under a grpc-js server call; undefined when the shape differs. */
export function sessionOf(call: unknown): object | undefined {
  const stream = baseServerCall(call)?.stream as { session?: unknown } | undefined;
  const session = stream?.session;
  return session !== null && typeof session === "object" ? session : undefined;
}

/**
 * Gives the calls of each connection turns in arrival order. Entries are keyed weakly by the connection and
 * kept while it lives: a push takes a turn of every connection, and an entry made and deleted per turn was
 * two objects and a weak-table insertion and removal per response.
 */
export class OutboundTurns {
  readonly #queues = new WeakMap<object, Queue>();

  /**
   * Runs `start` once no other call of `call`'s connection holds a turn; `start` must end its turn once the
   * socket has written what it handed over, or the call is gone. A call whose connection cannot be read
   * starts at once.
   */
  take(call: unknown, start: (end: EndTurn) => void): void {
    const session = sessionOf(call);
    if (session === undefined) return start(() => {});
    let queue = this.#queues.get(session);
    if (queue === undefined) {
      queue = { busy: false, waiting: [] };
      this.#queues.set(session, queue);
    }
    if (!queue.busy) {
      queue.busy = true;
      return start(this.#ender(queue));
    }
    queue.waiting.push(start);
  }

  #ender(queue: Queue): EndTurn {
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const next = queue.waiting.shift();
      if (next === undefined) {
        queue.busy = false;
        return;
      }
      // The next holder starts in a job of its own, never inside the ender's caller.
      queueMicrotask(() => next(this.#ender(queue)));
    };
  }
}
