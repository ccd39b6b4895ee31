/**
 * One list object per distinct watched-name list across connections. At a full view every proxy ACKs every
 * response with the same 3000 names: decoding them again per ACK cost a push more than the push itself, and
 * a thousand equal lists defeated every cache keyed by list. Lists are found by their encoded bytes (a
 * sampled hash picks the candidates, a byte comparison decides), so a repeated list costs a comparison.
 * The table is bounded: past `maxLists` lists or `maxBytes` (the encoded runs it copies and the lists it
 * keeps) it starts afresh, which costs only sharing, never correctness; its owner clears it when no stream
 * needs it any more. A list over the name limits (`limits`) is refused before anything of it is kept.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { decodeNameRun } from "@mesh/proto/discovery_request";
import type { NameInterner } from "./name_interner.ts";
import type { MemoStats } from "@mesh/shared/memo/memo_stats";
import {
  charsOf,
  checkListSize,
  checkNameLength,
  DEFAULT_NAME_LIMITS,
  type NameLimits,
} from "./name_budget.ts";

interface Entry {
  readonly run: Buffer;
  readonly names: readonly string[];
}

/** Estimated bytes a list costs beyond its run: the array's slot per name and the entry itself. */
const LIST_SLOT_BYTES = 8;
const LIST_OVERHEAD = 96;

/** Bytes sampled for the hash: enough to tell most lists apart, few enough to cost nothing. */
const SAMPLES = 64;

/** A cheap hash of the run's length and evenly spread bytes; equal runs always hash alike. */
function sampledHash(run: Uint8Array): number {
  let hash = run.length | 0;
  const step = Math.max(1, Math.floor(run.length / SAMPLES));
  for (let i = 0; i < run.length; i += step) hash = Math.imul(hash ^ run[i], 0x01000193);
  // The end of a list differs most often when one name is added.
  for (let i = Math.max(0, run.length - 16); i < run.length; i++) hash = Math.imul(hash ^ run[i], 0x01000193);
  return hash >>> 0;
}

/** Shared, frozen name lists by their encoded runs; the names themselves go through `interner`. */
export class NameListTable {
  readonly #interner: NameInterner;
  readonly #maxLists: number;
  readonly #maxBytes: number;
  readonly #limits: NameLimits;
  #byHash = new Map<number, Entry[]>();
  #lists = 0;
  #bytes = 0;

  /** Throws RangeError when `maxLists` or `maxBytes` is below 1. */
  constructor(
    interner: NameInterner,
    options: { maxLists?: number; maxBytes?: number; limits?: NameLimits } = {},
  ) {
    const { maxLists = 20_000, maxBytes = 32 * 1024 * 1024, limits = DEFAULT_NAME_LIMITS } = options;
    if (!(maxLists >= 1) || !(maxBytes >= 1)) {
      throw new RangeError(
        `Invalid name list table limits "${maxLists}" lists, "${maxBytes}" bytes: expected at least 1 each`,
      );
    }
    this.#interner = interner;
    this.#maxLists = maxLists;
    this.#maxBytes = maxBytes;
    this.#limits = limits;
  }

  /**
   * The shared list a run of encoded `resource_names` entries decodes to; never modify it. `typeUrl` only
   * names the request in an error.
   *
   * @throws {NameLimitError} when a name or the list is over the name limits
   */
  listOf(run: Uint8Array, typeUrl = ""): readonly string[] {
    const hash = sampledHash(run);
    const bytes = Buffer.from(run.buffer, run.byteOffset, run.byteLength);
    const candidates = this.#byHash.get(hash);
    for (const entry of candidates ?? []) {
      if (entry.run.equals(bytes)) return entry.names;
    }
    const decoded = decodeNameRun(run);
    // Checked before anything is kept: a list no stream may hold must not fill the memos either.
    for (const name of decoded) checkNameLength(this.#limits, name, "resource name", typeUrl);
    checkListSize(this.#limits, decoded.length, charsOf(decoded), typeUrl);
    const cost = run.length + decoded.length * LIST_SLOT_BYTES + LIST_OVERHEAD;
    if (cost > this.#maxBytes) return this.#interner.internAll(decoded);
    if (this.#lists >= this.#maxLists || this.#bytes + cost > this.#maxBytes) this.clear();
    const names = this.#interner.internAll(decoded);
    // A copy: the request's buffer belongs to the transport.
    const entry = { run: Buffer.from(run), names };
    const list = this.#byHash.get(hash);
    if (list === undefined) this.#byHash.set(hash, [entry]);
    else list.push(entry);
    this.#lists++;
    this.#bytes += cost;
    return names;
  }

  /** Forgets every list; lists handed out stay valid. */
  clear(): void {
    this.#byHash = new Map();
    this.#lists = 0;
    this.#bytes = 0;
  }

  /** Lists and estimated bytes held now. */
  stats(): MemoStats {
    return { entries: this.#lists, bytes: this.#bytes, maxBytes: this.#maxBytes };
  }

  /** Lists in the table now. */
  get size(): number {
    return this.#lists;
  }
}
