/**
 * Takes GOAWAY frames out of the bytes an HTTP/2 endpoint reads, and hands them over decoded instead: how the
 * experiment `goaway_bypass.ts` keeps a session's GOAWAY from nghttp2 on the runtimes that abort while nghttp2
 * processes one (docs/deno_pin.md).
 *
 * @module
 */

/** The client's connection preface (RFC 9113 §3.4), which a server reads before the first frame. */
export const CLIENT_PREFACE_BYTES = 24;

const FRAME_HEADER_BYTES = 9;
const GOAWAY = 7;
/** Last-stream-id (4 bytes) then the error code (4 bytes); debug data follows. */
const GOAWAY_FIXED_BYTES = 8;
/** Debug data kept for listeners; the rest is read past unseen (a peer may send up to 16 MiB). */
const DEBUG_DATA_KEPT_BYTES = 256;

/** A GOAWAY frame the filter took out. */
export interface GoawayFrame {
  /** The error code (RFC 9113 §7); 0 is NO_ERROR. */
  readonly code: number;
  /** The last stream the sender processed or may still process. */
  readonly lastStreamId: number;
  /** The opaque debug data, at most its first 256 bytes. */
  readonly debugData: Uint8Array;
}

/**
 * Follows one connection's inbound frames across chunks split anywhere, and leaves out each GOAWAY's header
 * and payload. Only frame headers and GOAWAY payloads are looked at: every other frame is passed by length, so
 * the cost is per frame, and a chunk holding no GOAWAY and no split header comes back as the same array.
 * A GOAWAY shorter than its fixed 8 bytes is malformed: it is left out and not reported.
 */
export class GoawayFrameFilter {
  /** Bytes of the current frame's payload (or of the preface) still to pass. */
  #pass: number;
  /** Bytes of the current GOAWAY's payload still to leave out. */
  #drop = 0;
  readonly #header = new Uint8Array(FRAME_HEADER_BYTES);
  #headerFilled = 0;
  #goaway: Uint8Array = new Uint8Array(0);
  #goawayFilled = 0;
  #goawayLength = 0;

  /**
   * `prefaceBytes` are passed before the first frame: {@link CLIENT_PREFACE_BYTES} for a server's input, 0 for
   * a client's. `onGoaway` is called for each well-formed GOAWAY left out, once its payload has been read.
   */
  constructor(prefaceBytes: number, readonly onGoaway: (frame: GoawayFrame) => void) {
    if (!Number.isInteger(prefaceBytes) || prefaceBytes < 0) {
      throw new RangeError(`prefaceBytes must be a whole number of bytes ≥ 0, got ${prefaceBytes}`);
    }
    this.#pass = prefaceBytes;
  }

  /** The bytes of `chunk` to hand on, in order; undefined when none are left. */
  filter(chunk: Uint8Array): Uint8Array | undefined {
    let kept: Uint8Array[] | undefined;
    /** Start of the run of `chunk` being kept. */
    let run = 0;
    let at = 0;
    const end = chunk.length;
    while (at < end) {
      if (this.#pass > 0) {
        const take = Math.min(this.#pass, end - at);
        this.#pass -= take;
        at += take;
        continue;
      }
      if (this.#drop > 0) {
        const take = Math.min(this.#drop, end - at);
        this.#readGoaway(chunk, at, take);
        this.#drop -= take;
        at += take;
        run = at;
        if (this.#drop === 0) this.#goawayRead();
        continue;
      }
      if (this.#headerFilled === 0 && end - at >= FRAME_HEADER_BYTES) {
        const length = (chunk[at] << 16) | (chunk[at + 1] << 8) | chunk[at + 2];
        if (chunk[at + 3] !== GOAWAY) {
          at += FRAME_HEADER_BYTES;
          this.#pass = length;
          continue;
        }
        if (at > run) (kept ??= []).push(chunk.subarray(run, at));
        at += FRAME_HEADER_BYTES;
        run = at;
        this.#goawayStarts(length);
        continue;
      }
      // A header split across chunks is held back until its type is known.
      if (at > run) (kept ??= []).push(chunk.subarray(run, at));
      const take = Math.min(FRAME_HEADER_BYTES - this.#headerFilled, end - at);
      this.#header.set(chunk.subarray(at, at + take), this.#headerFilled);
      this.#headerFilled += take;
      at += take;
      run = at;
      if (this.#headerFilled < FRAME_HEADER_BYTES) break;
      this.#headerFilled = 0;
      const h = this.#header;
      const length = (h[0] << 16) | (h[1] << 8) | h[2];
      if (h[3] === GOAWAY) {
        this.#goawayStarts(length);
      } else {
        (kept ??= []).push(h.slice());
        this.#pass = length;
      }
    }
    if (run < end) {
      if (kept === undefined) return run === 0 ? chunk : chunk.subarray(run);
      kept.push(chunk.subarray(run));
    }
    if (kept === undefined) return undefined;
    return kept.length === 1 ? kept[0] : concat(kept);
  }

  #goawayStarts(length: number): void {
    this.#goawayLength = length;
    this.#goaway = new Uint8Array(Math.min(length, GOAWAY_FIXED_BYTES + DEBUG_DATA_KEPT_BYTES));
    this.#goawayFilled = 0;
    this.#drop = length;
    if (length === 0) this.#goawayRead();
  }

  #readGoaway(chunk: Uint8Array, at: number, take: number): void {
    const room = Math.min(this.#goaway.length - this.#goawayFilled, take);
    if (room <= 0) return;
    this.#goaway.set(chunk.subarray(at, at + room), this.#goawayFilled);
    this.#goawayFilled += room;
  }

  #goawayRead(): void {
    if (this.#goawayLength < GOAWAY_FIXED_BYTES) return;
    const g = this.#goaway;
    const view = new DataView(g.buffer, g.byteOffset, g.byteLength);
    this.onGoaway({
      lastStreamId: view.getUint32(0) & 0x7fffffff,
      code: view.getUint32(4),
      debugData: g.subarray(GOAWAY_FIXED_BYTES),
    });
  }
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (let i = 0; i < parts.length; i++) length += parts[i].length;
  const out = new Uint8Array(length);
  let at = 0;
  for (let i = 0; i < parts.length; i++) {
    out.set(parts[i], at);
    at += parts[i].length;
  }
  return out;
}
