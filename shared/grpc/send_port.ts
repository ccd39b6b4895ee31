/**
 * The one way a server sends on a gRPC stream: hand over these bytes, and learn when they have left the
 * socket, within a timeout. Everything that reads the transport under grpc-js (the socket's count of bytes
 * written, the peer's flow-control window, the slices of a prefixed message) stays behind this port; the ADS
 * connections, the agent's relay and its SDS server only see {@link SendPort}.
 *
 * A write callback alone cannot say a message left: the runtime may buffer it natively while the peer grants
 * no flow-control credit, or take megabytes into a wide window before the socket writes them. So a send ends
 * only once the transport holds nothing back and the socket has written as many bytes as the message has.
 * Other streams of the connection can only make it end sooner.
 *
 * @module
 */
import * as grpc from "@grpc/grpc-js";
import { isOutboundStalled, socketBytesWritten, whenOutboundLeft } from "./outbound_state.ts";
import { LARGE_MESSAGE_SLICES, sendPrefixedWithoutCopy } from "./prefixed_send.ts";
import { OutboundTurns, sessionOf } from "./outbound_turns.ts";
import type { Expiring, SendDeadlines } from "./send_deadlines.ts";
import { GrpcStatusError } from "./grpc_status.ts";
import type { Timers } from "../time/timers.ts";

/** A send did not finish within its timeout; the port's owner ends the stream. */
export class SendTimeoutError extends Error {
  /** Records which send timed out and the setting that bounds it. */
  constructor(
    readonly streamId: string,
    readonly what: string,
    readonly timeoutMs: number,
    readonly setting: string,
  ) {
    super(
      `Sending "${what}" on stream "${streamId}" did not finish within ${timeoutMs}ms (${setting}): ` +
        `the peer is not reading; the stream was ended`,
    );
    this.name = "SendTimeoutError";
  }
}

/** The stream closed while a send was waiting, or before it started. */
export class StreamClosedError extends Error {
  /** Records the closed stream. */
  constructor(readonly streamId: string) {
    super(`Stream "${streamId}" is closed`);
    this.name = "StreamClosedError";
  }
}

/** Sends on one server stream. */
export interface SendPort {
  /** Names the stream in errors, e.g. an ADS connection id. */
  readonly id: string;
  /**
   * Writes `bytes` (a message with its gRPC prefix goes out uncopied, a long one in paced slices); resolves
   * once the socket has written them, and rejects with {@link SendTimeoutError} when the timeout passes
   * first (the owner is told, and ends the stream) or {@link StreamClosedError} when the stream closes
   * first. `what` names the message in errors, e.g. its type URL.
   */
  send(bytes: Uint8Array, what: string): Promise<void>;
  /** Sends written and not yet taken by the peer. */
  readonly sendsInProgress: number;
  /** The HTTP/2 connection the stream is on; undefined when it cannot be read. */
  readonly transport: object | undefined;
  /** True once the stream was closed by either side. */
  readonly closed: boolean;
  /**
   * Fails the sends in progress (as {@link peerGone}) and ends the stream with a status, OK ending it
   * normally; the status is written once however often it is called.
   */
  close(code?: grpc.status, details?: string): void;
  /** Fails the sends in progress, and every later one, when the stream is over; nothing is written. */
  peerGone(): void;
}

/** The server duplex call a port sends on, as far as the port uses its public API. */
export type SendPortCall = Pick<grpc.ServerDuplexStream<unknown, unknown>, "write" | "end" | "emit">;

/** Options of {@link SendPorts}. */
export interface SendPortsOptions {
  /** The deadlines of every send of the server's ports, under one timer; their length is the timeout. */
  readonly deadlines: SendDeadlines;
  /** The setting that sets the timeout, named in {@link SendTimeoutError}. */
  readonly setting: string;
  /** Times the looks at a socket that has not written a slice or a message yet; default the runtime's. */
  readonly timers?: Timers;
}

/**
 * Opens the send ports of one server. The streams of one HTTP/2 connection hand over their slices in turns,
 * so a connection never holds more than a slice the socket has not written.
 */
export class SendPorts {
  readonly #turns = new OutboundTurns();

  /** Ports share `options.deadlines` (one timer) and the server's turns. */
  constructor(readonly options: SendPortsOptions) {}

  /**
   * The port of `call`, named `id`; `onTimeout` is told of a send that timed out, after it was rejected,
   * and ends the stream (through {@link SendPort.close}).
   */
  open(call: SendPortCall, id: string, onTimeout: (error: SendTimeoutError) => void): SendPort {
    sendPrefixedWithoutCopy(call, {
      turns: this.#turns,
      large: LARGE_MESSAGE_SLICES,
      ...(this.options.timers === undefined ? {} : { timers: this.options.timers }),
    });
    return new CallSendPort(call, id, this.options, onTimeout);
  }
}

class CallSendPort implements SendPort {
  /**
   * The sends in progress, as a list linked through the sends themselves: a port has one at a time in the
   * common case, and a set made every port hold a table and every send grow and shrink it.
   */
  #first: PortSend | undefined;
  #last: PortSend | undefined;
  #inProgress = 0;
  #closed = false;
  #ended = false;

  constructor(
    readonly call: SendPortCall,
    readonly id: string,
    readonly options: SendPortsOptions,
    readonly onTimeout: (error: SendTimeoutError) => void,
  ) {}

  get sendsInProgress(): number {
    return this.#inProgress;
  }

  get transport(): object | undefined {
    return sessionOf(this.call);
  }

  get closed(): boolean {
    return this.#closed;
  }

  send(bytes: Uint8Array, what: string): Promise<void> {
    if (this.#closed) return Promise.reject(new StreamClosedError(this.id));
    const send = new PortSend(this, what, bytes.length);
    // Appended, so the sends end on peerGone in the order they were made, as before.
    send.previous = this.#last;
    if (this.#last !== undefined) this.#last.next = send;
    else this.#first = send;
    this.#last = send;
    this.#inProgress++;
    this.options.deadlines.track(send);
    this.call.write(bytes, send.written);
    return send.promise;
  }

  close(code: grpc.status = grpc.status.OK, details = "OK"): void {
    this.peerGone();
    if (this.#ended) return;
    this.#ended = true;
    if (code === grpc.status.OK) this.call.end();
    else this.call.emit("error", new GrpcStatusError(code, details));
  }

  peerGone(): void {
    if (this.#closed) return;
    this.#closed = true;
    // Each settle unlinks the send it ends; a closed port takes no new one, so this ends.
    while (this.#first !== undefined) this.#first.settle(new StreamClosedError(this.id));
  }

  /** Takes `send` off the sends in progress; false when it was not on them (it ended before). */
  unlink(send: PortSend): boolean {
    if (!send.inProgress) return false;
    send.inProgress = false;
    if (send.previous !== undefined) send.previous.next = send.next;
    else this.#first = send.next;
    if (send.next !== undefined) send.next.previous = send.previous;
    else this.#last = send.previous;
    send.previous = send.next = undefined;
    this.#inProgress--;
    return true;
  }
}

/**
 * One send in progress: its own deadline and the one closure the transport calls back, so a send makes one
 * object and a promise rather than a closure for each way it can end (every proxy's every response is one).
 */
class PortSend implements Expiring {
  readonly promise: Promise<void>;
  readonly #resolve: () => void;
  readonly #reject: (error: Error) => void;
  /** The socket's count of bytes written once this message has left; undefined when it cannot be read. */
  readonly #socketTarget: number | undefined;
  /**
   * Made only for a send that must wait for its peer: most leave at once, and an AbortController per
   * response (its abort makes a DOMException with a stack) costs more than the rest of the send.
   */
  #flushing: AbortController | undefined;
  /** The write callback: settles the send once the socket has written the message. */
  readonly written: (error?: Error | null) => void;
  /** True until the send ends; while true, it is linked into its port's sends in progress. */
  inProgress = true;
  /** Its neighbours among its port's sends in progress. */
  previous: PortSend | undefined = undefined;
  next: PortSend | undefined = undefined;

  constructor(
    readonly port: CallSendPort,
    readonly what: string,
    length: number,
  ) {
    const { promise, resolve, reject } = Promise.withResolvers<void>();
    this.promise = promise;
    this.#resolve = resolve;
    this.#reject = reject;
    const before = socketBytesWritten(port.call);
    this.#socketTarget = before === undefined ? undefined : before + length;
    this.written = (error) => this.#written(error);
  }

  /** Ends the send (with `error`, a failure); a send already ended stays as it ended. */
  settle(error?: Error): void {
    if (!this.port.unlink(this)) return;
    this.port.options.deadlines.untrack(this);
    this.#flushing?.abort();
    if (error === undefined) this.#resolve();
    else this.#reject(error);
  }

  /** The send timeout passed first: the send fails, and the port's owner is told after. */
  expire(): void {
    const { deadlines, setting } = this.port.options;
    const error = new SendTimeoutError(this.port.id, this.what, deadlines.timeoutMs, setting);
    this.settle(error);
    this.port.onTimeout(error);
  }

  #written(error?: Error | null): void {
    if (!this.inProgress) return;
    if (error) return this.settle(error);
    const call = this.port.call;
    if (!isOutboundStalled(call, this.#socketTarget)) return this.settle();
    this.#flushing = new AbortController();
    whenOutboundLeft(call, this.#socketTarget, this.#flushing.signal, this.port.options.timers).then(
      () => this.settle(),
      () => {},
    );
  }
}
