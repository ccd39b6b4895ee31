/**
 * What an ADS stream may make the server hold of the names a peer sends: each name (and type URL, and delta
 * version) at most `maxNameLength` characters, at most `maxNamesPerStream` names per stream (every type's
 * watch, its type URL, and the versions a delta stream claims to hold), and at most
 * `maxNameCharsPerConnection` characters of them over the streams of one HTTP/2 connection. A peer is
 * refused past them instead of the server keeping whatever it subscribes: four streams subscribing names of
 * eight kilobytes took the process past its heap.
 *
 * Characters are UTF-16 code units, which for the ASCII names Envoy and gRPC clients use are bytes.
 *
 * @module
 */
import { excerpt } from "@mesh/shared/log/excerpt";
import * as grpc from "@grpc/grpc-js";

/** The bounds, from `DISCOVERY_XDS_MAX_NAME_LENGTH`, `..._MAX_NAMES_PER_STREAM`, `..._MAX_NAME_CHARS_PER_CONNECTION`. */
export interface NameLimits {
  /** Longest resource name, type URL or delta version accepted, in characters. */
  readonly maxNameLength: number;
  /** Most names one stream may hold, over all its types. */
  readonly maxNamesPerStream: number;
  /** Most characters of names the streams of one HTTP/2 connection may hold together. */
  readonly maxNameCharsPerConnection: number;
}

/** The defaults: a DNS name is at most 253 characters and a cluster name adds a port and a subset. */
export const DEFAULT_NAME_LIMITS: NameLimits = Object.freeze({
  maxNameLength: 2048,
  maxNamesPerStream: 100_000,
  maxNameCharsPerConnection: 32 * 1024 * 1024,
});

/** A peer sent a name over a limit; the stream is ended with `code` and the message. */
export class NameLimitError extends RangeError {
  /** `code` is the gRPC status the stream ends with. */
  constructor(readonly code: grpc.status, message: string) {
    super(message);
    this.name = "NameLimitError";
  }
}

/**
 * Throws a {@link NameLimitError} (INVALID_ARGUMENT) when `name` is longer than the limit; `what` says what it
 * is ("resource name", "type URL") and `typeUrl` where it was sent.
 */
export function checkNameLength(limits: NameLimits, name: string, what: string, typeUrl: string): void {
  if (name.length <= limits.maxNameLength) return;
  throw new NameLimitError(
    grpc.status.INVALID_ARGUMENT,
    `A ${what} of ${name.length} characters in ${requestOf(typeUrl)} is longer than the limit of ` +
      `${limits.maxNameLength} (DISCOVERY_XDS_MAX_NAME_LENGTH)`,
  );
}

/** Throws a {@link NameLimitError} (RESOURCE_EXHAUSTED) when one list holds more names than a stream may. */
export function checkListSize(limits: NameLimits, names: number, chars: number, typeUrl: string): void {
  if (names > limits.maxNamesPerStream) throw tooManyNames(limits, names, typeUrl);
  if (chars > limits.maxNameCharsPerConnection) throw tooManyChars(limits, chars, typeUrl);
}

/** The characters of `names` together. */
export function charsOf(names: readonly string[]): number {
  // Indexed: a for...of that is not yet optimised allocates a result object per name, on every subscription.
  let chars = 0;
  for (let i = 0; i < names.length; i++) chars += names[i].length;
  return chars;
}

/** What the streams of one HTTP/2 connection hold together. */
interface TransportUse {
  chars: number;
  streams: number;
}

/** The name budgets of every open stream, with the per-connection totals; one per server. */
export class NameBudgets {
  readonly limits: NameLimits;
  readonly #transports = new Map<string, TransportUse>();

  /** @throws {RangeError} when a limit is not a positive integer */
  constructor(limits: NameLimits = DEFAULT_NAME_LIMITS) {
    for (const [key, value] of Object.entries(limits)) {
      if (!Number.isSafeInteger(value) || value < 1) {
        throw new RangeError(`Invalid name limit ${key} "${value}": expected a positive integer`);
      }
    }
    this.limits = limits;
  }

  /** The budget of a new stream on the HTTP/2 connection `transport` (the peer's address and port). */
  open(transport: string): StreamNameBudget {
    let use = this.#transports.get(transport);
    if (use === undefined) this.#transports.set(transport, use = { chars: 0, streams: 0 });
    use.streams++;
    return new StreamNameBudget(this.limits, use, () => {
      if (--use.streams === 0) this.#transports.delete(transport);
    });
  }

  /** Characters held by the streams of `transport`; 0 for a connection with no open stream. */
  charsOf(transport: string): number {
    return this.#transports.get(transport)?.chars ?? 0;
  }

  /** HTTP/2 connections with an open stream. */
  get transports(): number {
    return this.#transports.size;
  }
}

/** One stream's share of the name limits: what it holds, checked before it holds more. */
export class StreamNameBudget {
  readonly #limits: NameLimits;
  readonly #transport: TransportUse;
  readonly #onClose: () => void;
  #names = 0;
  #chars = 0;
  #closed = false;

  /** Use {@link NameBudgets.open}. */
  constructor(limits: NameLimits, transport: TransportUse, onClose: () => void) {
    this.#limits = limits;
    this.#transport = transport;
    this.#onClose = onClose;
  }

  /** Names the stream holds. */
  get names(): number {
    return this.#names;
  }

  /** Characters of the names the stream holds. */
  get chars(): number {
    return this.#chars;
  }

  /** Throws a {@link NameLimitError} when `name` is longer than the limit. */
  checkName(name: string, what: string, typeUrl: string): void {
    checkNameLength(this.#limits, name, what, typeUrl);
  }

  /**
   * Records that the stream holds `names` more names of `chars` characters (fewer when negative).
   *
   * @throws {NameLimitError} RESOURCE_EXHAUSTED when that would pass the stream's or its connection's limit;
   *   nothing is recorded then
   */
  add(names: number, chars: number, typeUrl: string): void {
    if (this.#closed) return;
    const total = this.#names + names;
    if (names > 0 && total > this.#limits.maxNamesPerStream) throw tooManyNames(this.#limits, total, typeUrl);
    const shared = this.#transport.chars + chars;
    if (chars > 0 && shared > this.#limits.maxNameCharsPerConnection) {
      throw tooManyChars(this.#limits, shared, typeUrl);
    }
    this.#names = total;
    this.#chars += chars;
    this.#transport.chars = shared;
  }

  /** The stream ended: what it held no longer counts against its connection. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#transport.chars -= this.#chars;
    this.#names = 0;
    this.#chars = 0;
    this.#onClose();
  }
}

function tooManyNames(limits: NameLimits, names: number, typeUrl: string): NameLimitError {
  return new NameLimitError(
    grpc.status.RESOURCE_EXHAUSTED,
    `Subscribing in ${requestOf(typeUrl)} would make ${names} names on this stream, over the limit ` +
      `of ${limits.maxNamesPerStream} (DISCOVERY_XDS_MAX_NAMES_PER_STREAM)`,
  );
}

function tooManyChars(limits: NameLimits, chars: number, typeUrl: string): NameLimitError {
  return new NameLimitError(
    grpc.status.RESOURCE_EXHAUSTED,
    `Subscribing in ${requestOf(typeUrl)} would make ${chars} characters of names on this ` +
      `connection's streams, over the limit of ${limits.maxNameCharsPerConnection} ` +
      `(DISCOVERY_XDS_MAX_NAME_CHARS_PER_CONNECTION)`,
  );
}

/** "a request", or with its type URL (which a peer chooses: quoted as an excerpt). */
function requestOf(typeUrl: string): string {
  return typeUrl === "" ? "a request" : `a "${excerpt(typeUrl)}" request`;
}
