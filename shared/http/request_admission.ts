/** Bounds on the requests one HTTP listener works on at once, in all and per client address. */
export interface RequestLimits {
  /** Requests being handled at once; one more is answered 503 before its body is read (default 256). */
  readonly maxRequests: number;
  /** Requests being handled at once for one client address; one more is answered 429 (default 64). */
  readonly maxRequestsPerPeer: number;
  /** Request body bytes held by handlers at once; a request that would pass it is answered 503 (64 MiB). */
  readonly maxBodyBytes: number;
  /** Request body bytes held at once for one client address; past it 429 (default 16 MiB). */
  readonly maxBodyBytesPerPeer: number;
}

/** Defaults: room for the API server's webhook calls and scrapers; far below what exhausts memory. */
export const DEFAULT_REQUEST_LIMITS: RequestLimits = Object.freeze({
  maxRequests: 256,
  maxRequestsPerPeer: 64,
  maxBodyBytes: 64 * 1024 * 1024,
  maxBodyBytesPerPeer: 16 * 1024 * 1024,
});

/** Which bound refused a request: the listener's (answered 503) or the client's own (answered 429). */
export type RequestRefusal = "requests" | "body_bytes" | "peer_requests" | "peer_body_bytes";

/** A request admitted: body bytes can be taken as they arrive, and everything is given back at the end. */
export interface AdmittedRequest {
  /** Takes `bytes` more of body; the bound passed when it cannot (nothing is taken then). */
  take(bytes: number): RequestRefusal | undefined;
  /** Gives back the request's slot and every byte it took, and returns how many; later calls return 0. */
  release(): number;
}

interface Usage {
  requests: number;
  bytes: number;
}

/**
 * Counts the requests of one listener and the body bytes they hold, per listener and per client address, and
 * refuses what would pass a bound. A client's entry is dropped when its last request ends, so the table holds
 * only clients with requests in flight.
 */
export class RequestAdmission {
  readonly #total: Usage = { requests: 0, bytes: 0 };
  readonly #peers = new Map<string, Usage>();

  /** The bounds checked on every request. */
  constructor(readonly limits: RequestLimits) {}

  /** Requests in flight and body bytes held, in all. */
  get usage(): Readonly<Usage> {
    return { ...this.#total };
  }

  /**
   * Admits a request from `peer` that declares `declaredBytes` of body (0 when unknown); the bound it would
   * pass otherwise.
   */
  admit(peer: string, declaredBytes: number): AdmittedRequest | RequestRefusal {
    const own = this.#peers.get(peer) ?? { requests: 0, bytes: 0 };
    if (this.#total.requests >= this.limits.maxRequests) return "requests";
    if (own.requests >= this.limits.maxRequestsPerPeer) return "peer_requests";
    const refused = this.#fits(own, declaredBytes);
    if (refused) return refused;
    this.#peers.set(peer, own);
    own.requests++;
    this.#total.requests++;
    let held = 0;
    let released = false;
    const take = (bytes: number): RequestRefusal | undefined => {
      if (released) return undefined;
      const over = this.#fits(own, bytes);
      if (over) return over;
      own.bytes += bytes;
      this.#total.bytes += bytes;
      held += bytes;
      return undefined;
    };
    take(declaredBytes);
    return {
      take,
      release: () => {
        if (released) return 0;
        released = true;
        own.requests--;
        own.bytes -= held;
        this.#total.requests--;
        this.#total.bytes -= held;
        if (own.requests === 0) this.#peers.delete(peer);
        return held;
      },
    };
  }

  #fits(own: Usage, bytes: number): RequestRefusal | undefined {
    if (this.#total.bytes + bytes > this.limits.maxBodyBytes) return "body_bytes";
    if (own.bytes + bytes > this.limits.maxBodyBytesPerPeer) return "peer_body_bytes";
    return undefined;
  }
}
