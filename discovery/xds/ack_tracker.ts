/**
 * The ACK/NACK bookkeeping of one ADS stream, per type URL: the nonce and version last sent, the nonce and
 * version the proxy last acknowledged, its latest rejection, and the newest push that had nothing new for it.
 * What a request says about the latest response is decided by the shared {@link replyKind}, as the agent's
 * SDS server decides it. Counting, logging and config distribution stay with the connection: this only
 * remembers, and says which push version an ACK stands for.
 *
 * @module
 */
import { type ReplyKind, replyKind } from "@mesh/shared/xds/reply_kind";
import { cut } from "@mesh/shared/log/excerpt";
import { nonceVersion } from "./nonce.ts";

/** Longest part of a proxy's NACK text `/debug/syncz` keeps, in characters. */
export const NACK_TEXT_KEPT = 4096;

/** The last rejection of one type. */
export interface NackInfo {
  /** Nonce of the rejected response. */
  readonly nonce: string;
  /** gRPC code name the proxy gave, such as `INVALID_ARGUMENT`. */
  readonly code: string;
  /** The proxy's error text, cut to {@link NACK_TEXT_KEPT} characters. */
  readonly message: string;
  /** When the rejection arrived, as an ISO 8601 timestamp. */
  readonly at: string;
}

/** Nonce and version bookkeeping of one type, as `/debug/syncz` shows it. */
export interface TypeSync {
  /** Nonce of the latest response sent. */
  nonceSent?: string;
  /** Version of the latest response sent. */
  versionSent?: string;
  /** When the latest response was sent, as an ISO 8601 timestamp. */
  sentAt?: string;
  /** Nonce of the latest response the proxy ACKed. */
  nonceAcked?: string;
  /** Version of the latest response the proxy ACKed. */
  versionAcked?: string;
  /** When the latest ACK arrived, as an ISO 8601 timestamp. */
  ackedAt?: string;
  /** The latest NACK, kept after later ACKs. */
  lastNack?: NackInfo;
  /**
   * The newest push version that had nothing new of this type for the proxy after the latest response: that
   * response stands for this version too.
   */
  unchangedThrough?: string;
}

/**
 * {@link TypeSync} as kept per type: times as epoch milliseconds, formatted only when asked for (every
 * response and every ACK sets one, and a date string each cost more than the rest of the bookkeeping).
 */
/**
 * A type's bookkeeping, every field present from the start and cleared by assigning undefined: deleting a
 * field would turn each stream's record of each type into a slower, larger dictionary-mode object.
 */
class SyncState {
  nonceSent: string | undefined = undefined;
  versionSent: string | undefined = undefined;
  sentAtMs: number | undefined = undefined;
  nonceAcked: string | undefined = undefined;
  versionAcked: string | undefined = undefined;
  ackedAtMs: number | undefined = undefined;
  lastNack: NackInfo | undefined = undefined;
  unchangedThrough: string | undefined = undefined;
}

/** One stream's ACK/NACK bookkeeping per type URL; owned by its connection. */
export class AckTracker {
  readonly #sync = new Map<string, SyncState>();

  /** What a request of `typeUrl` with `nonce` (and an error detail when `rejected`) says; see {@link replyKind}. */
  replyKind(typeUrl: string, nonce: string, rejected: boolean): ReplyKind {
    return replyKind(this.#sync.get(typeUrl)?.nonceSent, nonce, rejected);
  }

  /** True when `nonce` is the latest one sent for `typeUrl`. */
  isLatestNonce(typeUrl: string, nonce: string): boolean {
    return this.#sync.get(typeUrl)?.nonceSent === nonce;
  }

  /** The version of the latest response of `typeUrl`; undefined before the first. */
  versionSent(typeUrl: string): string | undefined {
    return this.#sync.get(typeUrl)?.versionSent;
  }

  /** Nonce of the latest response of `typeUrl`; undefined before the first. */
  nonceSent(typeUrl: string): string | undefined {
    return this.#sync.get(typeUrl)?.nonceSent;
  }

  /** True when the proxy rejected the latest response of `typeUrl` (it still holds an older one). */
  rejectedLatest(typeUrl: string): boolean {
    const sync = this.#sync.get(typeUrl);
    return sync?.lastNack !== undefined && sync.lastNack.nonce === sync.nonceSent;
  }

  /** Records a response of `typeUrl` sent with `version` and `nonce`. */
  sent(typeUrl: string, version: string, nonce: string): void {
    const sync = this.#state(typeUrl);
    sync.nonceSent = nonce;
    sync.versionSent = version;
    sync.sentAtMs = Date.now();
    sync.unchangedThrough = undefined;
  }

  /**
   * Records an ACK of `typeUrl`; returns the push version it stands for (the newest unchanged push when it
   * acknowledges the latest response, else the version its nonce carries), undefined when untracked.
   */
  acked(typeUrl: string, nonce: string, version: string): string | undefined {
    const sync = this.#state(typeUrl);
    // The proxy echoes what was sent: keeping the sent strings lets the decoded copies die young instead of
    // being held, one set per proxy and type, until the next ACK.
    sync.nonceAcked = nonce === sync.nonceSent ? sync.nonceSent : nonce;
    sync.versionAcked = version === sync.versionSent ? sync.versionSent : version;
    sync.ackedAtMs = Date.now();
    return nonce === sync.nonceSent && sync.unchangedThrough !== undefined
      ? sync.unchangedThrough
      : nonceVersion(sync.nonceAcked);
  }

  /**
   * Records that push `pushVersion` had nothing new of `typeUrl`, so the latest response stands for it too;
   * true when the proxy has already ACKed that response (it is then at `pushVersion`). Nothing is recorded for
   * a type never sent.
   */
  unchanged(typeUrl: string, pushVersion: string): boolean {
    const sync = this.#sync.get(typeUrl);
    if (sync?.nonceSent === undefined) return false;
    sync.unchangedThrough = pushVersion;
    return sync.nonceAcked === sync.nonceSent;
  }

  /**
   * Records a NACK of `typeUrl` with the code name and text the proxy gave, the text cut to
   * {@link NACK_TEXT_KEPT} characters (a peer chooses both). Only a type the stream was sent keeps it.
   */
  nacked(typeUrl: string, nonce: string, code: string, message: string): void {
    const sync = this.#sync.get(typeUrl);
    if (sync === undefined) return;
    sync.lastNack = { nonce, code, message: cut(message, NACK_TEXT_KEPT), at: new Date().toISOString() };
  }

  /** Forgets a type the proxy unsubscribed from. */
  forget(typeUrl: string): void {
    this.#sync.delete(typeUrl);
  }

  /** Nonce/version state per type URL. */
  status(): Record<string, Readonly<TypeSync>> {
    return Object.fromEntries([...this.#sync].map(([type, state]) => {
      const out: TypeSync = {};
      if (state.nonceSent !== undefined) out.nonceSent = state.nonceSent;
      if (state.versionSent !== undefined) out.versionSent = state.versionSent;
      if (state.sentAtMs !== undefined) out.sentAt = new Date(state.sentAtMs).toISOString();
      if (state.nonceAcked !== undefined) out.nonceAcked = state.nonceAcked;
      if (state.versionAcked !== undefined) out.versionAcked = state.versionAcked;
      if (state.ackedAtMs !== undefined) out.ackedAt = new Date(state.ackedAtMs).toISOString();
      if (state.lastNack !== undefined) out.lastNack = state.lastNack;
      if (state.unchangedThrough !== undefined) out.unchangedThrough = state.unchangedThrough;
      return [type, out];
    }));
  }

  #state(typeUrl: string): SyncState {
    let sync = this.#sync.get(typeUrl);
    if (sync === undefined) {
      sync = new SyncState();
      this.#sync.set(typeUrl, sync);
    }
    return sync;
  }
}
