/**
 * How many responses of one kind are built or sent at once. A response holds its body until its client has
 * read it (up to the listener's idle time for a client that reads slowly or not at all), and building a large
 * one holds the event loop: without a bound, one client asking for a large answer on each of its connections
 * holds as many bodies, and every other request of the server, `/ready` among them, waits behind their builds.
 *
 * @module
 */

/** Counts the responses a handler gives while they are built and sent, up to `max` at once. */
export class ResponseBound {
  #inProgress = 0;

  /** Allows `max` responses at once (at least 1). */
  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1) {
      throw new RangeError(`ResponseBound max ${max}: expected an integer ≥ 1`);
    }
  }

  /** Responses being built or sent now. */
  get inProgress(): number {
    return this.#inProgress;
  }

  /**
   * Runs `respond` when fewer than `max` responses are in progress, and counts its response until its body has
   * been sent or cancelled; undefined, without running it, when `max` are.
   */
  async run(respond: () => Response | Promise<Response>): Promise<Response | undefined> {
    if (this.#inProgress >= this.max) return undefined;
    this.#inProgress++;
    let response: Response;
    try {
      response = await respond();
    } catch (error) {
      this.#inProgress--;
      throw error;
    }
    if (response.body === null) {
      this.#inProgress--;
      return response;
    }
    return new Response(untilDone(response.body, () => this.#inProgress--), response);
  }
}

/** `body` passed on as its reader pulls; `done` runs once, when it ends, fails or is cancelled. */
function untilDone(body: ReadableStream<Uint8Array>, done: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let finished = false;
  const finish = () => {
    if (!finished) done();
    finished = true;
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { value, done: ended } = await reader.read();
        if (ended) {
          controller.close();
          finish();
        } else {
          controller.enqueue(value);
        }
      } catch (error) {
        finish();
        controller.error(error);
      }
    },
    async cancel(reason) {
      finish();
      await reader.cancel(reason);
    },
  }, { highWaterMark: 0 });
}

/** Bytes a piece of {@link bytesInPieces} holds. */
const PIECE_BYTES = 64 * 1024;

/**
 * `bytes` as a body handed over in views of 64 KiB as the client reads: many responses can send one array this
 * way, and a response counted by a {@link ResponseBound} stays counted until its client has read most of it
 * (handed whole, the runtime takes a body at once, and copies it per response).
 */
export function bytesInPieces(bytes: Uint8Array): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.byteLength) {
        controller.close();
        return;
      }
      controller.enqueue(bytes.subarray(offset, offset + PIECE_BYTES));
      offset += PIECE_BYTES;
    },
  }, { highWaterMark: 0 });
}

/**
 * `body` handed over in pieces of at most 64 KiB as the client reads, each read from `body` only when the last
 * has been taken: a body built as it is read (`json_stream.ts`) stays lazy, and a large one given whole is
 * passed on as {@link bytesInPieces} passes an array.
 */
export function streamInPieces(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let held: Uint8Array = new Uint8Array(0);
  return new ReadableStream({
    async pull(controller) {
      if (held.byteLength === 0) {
        const { value, done } = await reader.read();
        if (done) return controller.close();
        held = value;
      }
      controller.enqueue(held.subarray(0, PIECE_BYTES));
      held = held.subarray(PIECE_BYTES);
    },
    cancel: (reason) => reader.cancel(reason),
  }, { highWaterMark: 0 });
}
