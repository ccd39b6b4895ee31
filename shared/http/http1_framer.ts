/**
 * Finds where HTTP/1.1 messages begin and end in a byte stream, without keeping their bodies: enough for the
 * connection guard to give every request its own header deadline, to know when a connection has no request
 * outstanding, and to end a relay once every request of a half-closed client has its response.
 *
 * @module
 */

/** Which side of the exchange a framer reads. */
export type Http1Side = "request" | "response";

/** What a completed header block said about the message. */
export interface Http1Head {
  /** The request method (upper case) on the request side; the status code as text on the response side. */
  readonly start: string;
}

type State = "head" | "body" | "chunk-size" | "chunk-data" | "chunk-end" | "trailer" | "opaque";

const CR = 13;
const LF = 10;
/** Longest chunk-size or trailer line accepted; a longer one loses the framing. */
const MAX_LINE = 4096;
const LATIN1 = new TextDecoder("latin1");

/**
 * Follows one direction of an HTTP/1.1 connection. Once the stream stops being HTTP/1.1 messages it can follow
 * (a protocol upgrade, CONNECT, the HTTP/2 preface, a response delimited by close, a malformed block), the
 * framer turns `opaque` and stays so.
 */
export class Http1Framer {
  /** Header blocks completed (final responses only, on the response side). */
  heads = 0;
  /** Messages whose body has fully passed. */
  completed = 0;
  /** True once the stream can no longer be framed. */
  opaque = false;
  /** True once a header block grew past the cap before it ended. */
  tooLarge = false;
  #state: State = "head";
  #head: number[] = [];
  #remaining = 0;
  #line: number[] = [];

  /**
   * `maxHeaderBytes` caps each header block. On the response side, `nextRequest` gives the method of the
   * request the next final response answers (HEAD responses have no body).
   */
  constructor(
    readonly side: Http1Side,
    readonly maxHeaderBytes: number,
    readonly nextRequest: () => string | undefined = () => undefined,
    readonly onHead: (head: Http1Head) => void = () => {},
  ) {}

  /** True while part of a header block has arrived and its end has not. */
  get inHead(): boolean {
    return this.#state === "head" && this.#head.length > 0;
  }

  /** Passes `bytes` through the framer; they are not kept beyond the current header block. */
  feed(bytes: Uint8Array): void {
    this.#feed(bytes, false);
  }

  /**
   * Passes `bytes` up to the end of the first message they complete, and returns how many that is: all of
   * them when none completes, or once the stream can no longer be framed.
   */
  feedMessage(bytes: Uint8Array): number {
    const passed = this.#feed(bytes, true);
    return this.opaque || this.tooLarge ? bytes.length : passed;
  }

  #feed(bytes: Uint8Array, oneMessage: boolean): number {
    const before = this.completed;
    let i = 0;
    while (i < bytes.length && !this.opaque && !this.tooLarge && !(oneMessage && this.completed > before)) {
      switch (this.#state) {
        case "head": {
          const b = bytes[i++];
          // Empty lines before a request line are allowed (RFC 9112 2.2).
          if (this.#head.length === 0 && (b === CR || b === LF)) break;
          this.#head.push(b);
          const n = this.#head.length;
          if (n >= 4 && b === LF && this.#head[n - 2] === CR && this.#head[n - 3] === LF) {
            this.#endHead();
          } else if (n > this.maxHeaderBytes) {
            this.tooLarge = true;
          }
          break;
        }
        case "body":
        case "chunk-data": {
          const take = Math.min(this.#remaining, bytes.length - i);
          i += take;
          this.#remaining -= take;
          if (this.#remaining === 0) {
            if (this.#state === "body") this.#complete();
            else this.#state = "chunk-end";
          }
          break;
        }
        case "chunk-end":
        case "chunk-size":
        case "trailer": {
          const b = bytes[i++];
          if (b !== LF) {
            this.#line.push(b);
            if (this.#line.length > MAX_LINE) this.opaque = true;
            break;
          }
          const line = String.fromCharCode(...this.#line).replace(/\r$/, "");
          this.#line = [];
          this.#endLine(line);
          break;
        }
      }
    }
    return i;
  }

  #endLine(line: string): void {
    if (this.#state === "chunk-end") {
      this.#state = line === "" ? "chunk-size" : "opaque";
    } else if (this.#state === "chunk-size") {
      const size = parseInt(line.split(";")[0].trim(), 16);
      if (!/^[0-9a-fA-F]+$/.test(line.split(";")[0].trim()) || !Number.isSafeInteger(size)) {
        this.opaque = true;
      } else if (size === 0) {
        this.#state = "trailer";
      } else {
        this.#remaining = size;
        this.#state = "chunk-data";
      }
    } else if (line === "") {
      this.#complete();
    }
    if (this.#state === "opaque") this.opaque = true;
  }

  #endHead(): void {
    const text = LATIN1.decode(Uint8Array.from(this.#head));
    this.#head = [];
    const [startLine, ...fields] = text.split("\r\n");
    const headers = new Map<string, string>();
    for (const field of fields) {
      const colon = field.indexOf(":");
      if (colon <= 0) continue;
      const name = field.slice(0, colon).trim().toLowerCase();
      const value = field.slice(colon + 1).trim();
      headers.set(name, headers.has(name) ? `${headers.get(name)}, ${value}` : value);
    }
    const parts = startLine.split(" ");
    let bodyless = false;
    if (this.side === "request") {
      const method = parts[0]?.toUpperCase() ?? "";
      if (method === "PRI" || method === "CONNECT" || headers.has("upgrade") || parts.length !== 3) {
        this.opaque = true;
        return;
      }
      this.heads++;
      this.onHead({ start: method });
    } else {
      const status = Number(parts[1]);
      if (!/^HTTP\/1\.[01]$/.test(parts[0] ?? "") || !Number.isInteger(status) || status === 101) {
        this.opaque = true;
        return;
      }
      if (status < 200) return; // an interim response: the final one follows
      this.heads++;
      this.onHead({ start: String(status) });
      const method = this.nextRequest();
      bodyless = status === 204 || status === 304 || method === "HEAD";
    }
    const coding = headers.get("transfer-encoding");
    const length = headers.get("content-length");
    if (bodyless) {
      this.#complete();
    } else if (coding !== undefined) {
      if (!/(^|,)\s*chunked\s*$/i.test(coding)) {
        this.opaque = true;
      } else {
        this.#state = "chunk-size";
      }
    } else if (length !== undefined) {
      const n = /^\d+$/.test(length) ? Number(length) : NaN;
      if (!Number.isSafeInteger(n)) {
        this.opaque = true;
      } else if (n === 0) {
        this.#complete();
      } else {
        this.#remaining = n;
        this.#state = "body";
      }
    } else if (this.side === "request") {
      this.#complete();
    } else {
      this.opaque = true; // delimited by the server closing
    }
  }

  #complete(): void {
    this.completed++;
    this.#state = "head";
  }
}
