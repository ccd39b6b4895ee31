/**
 * Config distribution tracking: which push versions exist (with what changed in each), and which version
 * each connected proxy acknowledged per type. Answers "has every proxy applied my change to X?".
 *
 * @module
 */
import { shortTypeName } from "@mesh/proto/type_urls";

/** One push version kept in the history. */
export interface PushedVersion {
  /** The push version, as sent in nonces. */
  readonly version: string;
  /** Wall-clock milliseconds. */
  readonly pushedAt: number;
  /** Config keys changed by this version; undefined when unknown (everything may have changed). */
  readonly configsUpdated?: readonly string[];
}

/** The version one proxy connection acknowledged for one type. */
export interface AckedVersion {
  /** The push version the proxy acknowledged. */
  readonly version: string;
  /** When the ACK arrived, in wall-clock milliseconds. */
  readonly ackedAt: number;
}

/** {@link AckedVersion} as kept: updated in place by every later ACK of its type, copied when reported. */
interface HeldAck {
  version: string;
  ackedAt: number;
}

interface ProxyAcks {
  readonly proxyId: string;
  readonly byType: Map<string, HeldAck>;
}

/** The answer of `/debug/config_distribution`. */
export interface DistributionReport {
  /** Retained push versions, oldest first. */
  readonly history: readonly PushedVersion[];
  /** Every tracked connection with its latest acknowledged version per type. */
  readonly proxies: readonly {
    readonly proxyId: string;
    readonly connectionId: string;
    readonly acked: Readonly<Record<string, AckedVersion>>;
  }[];
  /** Present when a resource was asked about. */
  readonly resource?: {
    readonly key: string;
    /** The newest retained version that changed it; null when no retained version did. */
    readonly version: string | null;
    /** Proxies whose every acknowledged type is at that version or newer. */
    readonly inSync: readonly string[];
    readonly notInSync: readonly string[];
  };
}

/** Keeps push history for `retentionMs` (the newest version is always kept) and the latest ACK per type. */
export class DistributionTracker {
  readonly #history: PushedVersion[] = [];
  readonly #acks = new Map<string, ProxyAcks>();
  readonly #now: () => number;

  /** Keeps push versions for `retentionMs` milliseconds; `now` is the wall clock in milliseconds. */
  constructor(readonly retentionMs: number, now: () => number = Date.now) {
    this.#now = now;
  }

  /** Records a new push version; pushing the same version again is ignored. */
  recordPush(version: string, configsUpdated: ReadonlySet<string> | undefined): void {
    if (this.#history.at(-1)?.version === version) return;
    this.#history.push({
      version,
      pushedAt: this.#now(),
      ...(configsUpdated === undefined ? {} : { configsUpdated: [...configsUpdated].sort() }),
    });
    this.#prune();
  }

  /** Records that a connection acknowledged `version` of `typeUrl`. */
  recordAck(connectionId: string, proxyId: string, typeUrl: string, version: string): void {
    let acks = this.#acks.get(connectionId);
    if (acks === undefined) {
      acks = { proxyId, byType: new Map() };
      this.#acks.set(connectionId, acks);
    }
    // Every proxy ACKs every push of every type: the record of a type is updated in place, and the retained
    // version's own string is kept, so an ACK leaves nothing behind for the collector.
    const pushed = this.#retained(version) ?? version;
    const held = acks.byType.get(typeUrl);
    if (held === undefined) acks.byType.set(typeUrl, { version: pushed, ackedAt: this.#now() });
    else {
      held.version = pushed;
      held.ackedAt = this.#now();
    }
  }

  /** The retained push version equal to `version`, newest first; undefined when none is. */
  #retained(version: string): string | undefined {
    for (let i = this.#history.length - 1; i >= 0; i--) {
      if (this.#history[i].version === version) return this.#history[i].version;
    }
    return undefined;
  }

  /** Forgets a closed connection. */
  forget(connectionId: string): void {
    this.#acks.delete(connectionId);
  }

  /** Every retained version and every connection's ACKs; with `resource`, which proxies have its last change. */
  report(resource?: string): DistributionReport {
    this.#prune();
    const proxies = [...this.#acks].map(([connectionId, acks]) => ({
      proxyId: acks.proxyId,
      connectionId,
      acked: Object.fromEntries(
        [...acks.byType].map(([type, { version, ackedAt }]) => [shortTypeName(type), { version, ackedAt }]),
      ),
    }));
    const report: DistributionReport = { history: [...this.#history], proxies };
    if (resource === undefined) return report;
    const index = this.#history.findLastIndex((v) =>
      v.configsUpdated === undefined || v.configsUpdated.includes(resource)
    );
    const inSync: string[] = [];
    const notInSync: string[] = [];
    if (index >= 0) {
      for (const acks of this.#acks.values()) {
        const atOrAfter = [...acks.byType.values()].every((a) =>
          this.#history.findIndex((v) => v.version === a.version) >= index
        );
        (atOrAfter && acks.byType.size > 0 ? inSync : notInSync).push(acks.proxyId);
      }
    }
    return {
      ...report,
      resource: {
        key: resource,
        version: index >= 0 ? this.#history[index].version : null,
        inSync: inSync.sort(),
        notInSync: notInSync.sort(),
      },
    };
  }

  /**
   * For each of `versions`, how many tracked connections acknowledged it or a newer version for every type
   * they acknowledged, and how many connections there are (the reference's `dataPlaneCount`). A version no
   * longer retained is older than every retained one; a connection with no ACK yet, or one at a version no
   * longer retained, has none of them.
   */
  acknowledged(versions: Iterable<string>): { readonly total: number; readonly acked: Map<string, number> } {
    this.#prune();
    const index = new Map(this.#history.map((v, i) => [v.version, i]));
    // Connections by the oldest retained version they hold: a histogram over the history, summed from the end.
    const atOrAfter = new Array<number>(this.#history.length + 1).fill(0);
    for (const acks of this.#acks.values()) {
      if (acks.byType.size === 0) continue;
      let oldest = Infinity;
      for (const acked of acks.byType.values()) oldest = Math.min(oldest, index.get(acked.version) ?? -1);
      if (oldest >= 0) atOrAfter[oldest]++;
    }
    for (let i = atOrAfter.length - 2; i >= 0; i--) atOrAfter[i] += atOrAfter[i + 1];
    const acked = new Map<string, number>();
    for (const version of versions) acked.set(version, atOrAfter[index.get(version) ?? 0]);
    return { total: this.#acks.size, acked };
  }

  #prune(): void {
    const cutoff = this.#now() - this.retentionMs;
    while (this.#history.length > 1 && this.#history[0].pushedAt < cutoff) this.#history.shift();
  }
}
