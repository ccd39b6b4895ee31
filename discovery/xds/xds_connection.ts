/**
 * What both ADS protocols share: one proxy on one stream, its work serialised, its responses sent through the
 * stream's {@link SendPort} (bounded by `DISCOVERY_XDS_SEND_TIMEOUT`), its ACKs and NACKs recorded by an
 * {@link AckTracker}, and a record of what was sent for the debug interface.
 *
 * @module
 */
import type { ConnectionLog } from "./connection_log.ts";
import * as grpc from "@grpc/grpc-js";
import type protobuf from "protobufjs";
import type { ControlPlaneInfo } from "@mesh/proto/discovery_frame";
import type { RpcStatus } from "@mesh/proto/discovery_request";
import { shortTypeName, TYPE_URL } from "@mesh/proto/type_urls";
import type { Logger } from "@mesh/shared/log/logger";
import type { Proxy } from "../model/proxy.ts";
import type { DistributionTracker } from "./distribution_tracker.ts";
import { isForced, type PushRequest } from "../push/push_request.ts";
import type { ConflictSink } from "../push/listener_conflicts.ts";
import {
  type GenerateRequest,
  type GeneratorRegistry,
  mayAffect,
  type PushSnapshot,
} from "../generate/generator.ts";
import type { ChangedKinds } from "./changed_kinds.ts";
import { GenerateError } from "./response_builder.ts";
import type { ResponseBuilds } from "./response_builds.ts";
import type { VersionedResource } from "./versioned_resource.ts";
import { SentRecord } from "./sent_record.ts";
import type { ShapeMemo } from "./shape_memo.ts";
import type { ListMemos } from "./list_memos.ts";
import type { NonceSource } from "./nonce.ts";
import type { ResponseGate } from "./response_gate.ts";
import type { OutboundTurns } from "@mesh/shared/grpc/outbound_turns";
import type { SendPort, SendPorts, SendTimeoutError } from "@mesh/shared/grpc/send_port";
import { AckTracker, type TypeSync } from "./ack_tracker.ts";
import type { NameInterner } from "./name_interner.ts";
import type { NameBudgets, StreamNameBudget } from "./name_budget.ts";
import type { NackLog } from "./nack_log.ts";
import { excerpt } from "@mesh/shared/log/excerpt";
import type { XdsCache } from "./xds_cache.ts";
import type { XdsMetrics } from "./xds_metrics.ts";
import { grpcCodeName } from "@mesh/shared/grpc/grpc_status";
import { pushOrder, resentAfter } from "./xds_types.ts";

/** The raw ADS stream: encoded requests in, encoded responses out. */
export type AdsCall = grpc.ServerDuplexStream<Uint8Array, Uint8Array>;

/** State-of-the-world or incremental ADS. */
export type XdsProtocol = "sotw" | "delta";

/** What a connection needs from the server that owns it. */
export interface ConnectionContext<P extends PushSnapshot> {
  /** Generators by type URL, chosen per proxy flavour. */
  readonly generators: GeneratorRegistry<P>;
  /** Encoded resources shared across connections, keyed by generator inputs. */
  readonly cache: XdsCache;
  /** Envoy's v3 schema, for encoding resources. */
  readonly schema: protobuf.Root;
  /** Generation results shared by proxies of the same shape within one snapshot. */
  readonly shapes: ShapeMemo;
  /** Where generators report the listener conflicts of the newest snapshot. */
  readonly conflicts?: ConflictSink;
  /** Answers about the resource and name lists that proxies of one shape share. */
  readonly lists: ListMemos;
  /** Makes the nonces of every response, unique in the server. */
  readonly nonces: NonceSource;
  /** xDS counters and histograms. */
  readonly metrics: XdsMetrics;
  /** Logger of the connection's events. */
  readonly logger: Logger;
  /** The config kinds of each change set, worked out once per set. */
  readonly changedKinds: ChangedKinds;
  /** Shares the strings of watched names between connections. */
  readonly names: NameInterner;
  /** What each stream, and the streams of one HTTP/2 connection, may hold of the names peers send. */
  readonly budgets: NameBudgets;
  /** Where NACKs are logged, paced per proxy. */
  readonly nacks: NackLog;
  /** Where refused streams and unanswered requests are logged, paced per peer address. */
  readonly connectionLog: ConnectionLog;
  /** Every response is built and sent holding one of its permits (`DISCOVERY_PUSH_THROTTLE`). */
  readonly gate: ResponseGate;
  /** Builds responses in the gate's slices, sharing a build under way of the same list. */
  readonly builds: ResponseBuilds;
  /**
   * Turns of the HTTP/2 connections: the streams of one connection ask for a permit one at a time, so a
   * connection carrying a hundred streams holds one permit, not a hundred. Absent, every stream asks alone.
   */
  readonly connectionTurns?: OutboundTurns;
  /** Opens each stream's send port: sends bounded by `DISCOVERY_XDS_SEND_TIMEOUT`, under one timer. */
  readonly ports: SendPorts;
  /** Present when config distribution tracking is on; nonces then carry the push version. */
  readonly tracker?: DistributionTracker;
  /** Identifies this control plane in every response; absent leaves the field unset. */
  readonly controlPlane?: ControlPlaneInfo;
  /** The next connection's number; connection ids are `<proxy id>-<number>`, unique in the server. */
  nextConnectionNumber(): number;
  /** The newest push snapshot; request-driven responses always read it. */
  currentPush(): P;
  /** Called once when the connection closes for any reason. */
  onClosed(connection: XdsConnection<P>): void;
}

/** What an endpoint-only push builds for a proxy that watches EDS, and for one that does not. */
const ENDPOINTS_ONLY: readonly string[] = Object.freeze([TYPE_URL.endpoint]);
/** No types, or no names: one frozen empty list rather than a new one per proxy. */
const NO_TYPES: readonly string[] = Object.freeze([]);

/** What was last sent of one type, for `/debug/config_dump`. */
export interface SentResources {
  /** Version of the latest response of the type. */
  readonly version: string;
  /** Nonce of the latest response of the type. */
  readonly nonce: string;
  /** Resources the proxy holds of the type, by name. */
  readonly resources: ReadonlyMap<string, VersionedResource>;
}

/** One proxy's ADS stream. Subclasses implement the protocol; all work on one connection runs one at a time. */
export abstract class XdsConnection<P extends PushSnapshot = PushSnapshot> {
  /** `<proxy id>-<n>`, unique in the server. */
  readonly id: string;
  /** When the stream was accepted. */
  readonly connectedAt: Date = new Date();
  /** Which ADS protocol the subclass speaks. */
  abstract readonly protocol: XdsProtocol;
  readonly #sent = new Map<string, SentRecord>();
  #chain: Promise<unknown> = Promise.resolve();
  /** Work serialised and not yet finished. */
  #queuedWork = 0;
  readonly #workDone = (): void => {
    this.#queuedWork--;
  };
  #closed = false;
  readonly #whenClosed = Promise.withResolvers<void>();
  /** What this stream holds of the names its peer sent; checked before it holds more. */
  protected readonly nameBudget: StreamNameBudget;
  /** The nonce/version/ACK/NACK bookkeeping of each type. */
  protected readonly acks: AckTracker = new AckTracker();
  /** Where responses are sent. */
  readonly #port: SendPort;
  /** Takes this stream's turn of its HTTP/2 connection; made once, not once per response. */
  readonly #admit?: (enter: (leave?: () => void) => void) => void;

  /** Binds a connection to its proxy, its stream and the server that owns it; the id is assigned here. */
  constructor(
    readonly proxy: Proxy,
    readonly call: AdsCall,
    protected readonly ctx: ConnectionContext<P>,
  ) {
    this.id = `${proxy.id}-${ctx.nextConnectionNumber()}`;
    // grpc-js names a TCP peer by address and port, which no two open connections share.
    this.nameBudget = ctx.budgets.open(call.getPeer());
    this.#port = ctx.ports.open(call, this.id, (error) => this.#sendTimedOut(error));
    const turns = ctx.connectionTurns;
    if (turns !== undefined) this.#admit = (enter) => turns.take(call, enter);
  }

  /** The peer address as grpc-js reports it. */
  get peer(): string {
    return this.call.getPeer();
  }

  /** The HTTP/2 connection the stream is on; undefined when it cannot be read. */
  get transport(): object | undefined {
    return this.#port.transport;
  }

  /** Sends written and not yet taken by the peer (each bounded by the send timeout). */
  get sendsInProgress(): number {
    return this.#port.sendsInProgress;
  }

  /** True once the stream has ended. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Resolves once the connection has closed, however it closed. */
  get whenClosed(): Promise<void> {
    return this.#whenClosed.promise;
  }

  /** Handles one decoded request of this protocol. Called through `serialize`. */
  abstract handleRequest(request: unknown): Promise<void>;

  /**
   * Pushes what `request` calls for to this proxy: every watched type for a full push (only EDS for an
   * endpoint-only one), in push order, each sent as soon as it is built ({@link pushType}). Called through
   * `serialize`.
   */
  push(request: PushRequest): Promise<void> {
    const types = this.pushTypes(request);
    if (request.full) this.recordUnaffected(this.ctx.currentPush().version, types);
    if (types.length === 0) return Promise.resolve();
    // One permit for the whole push: a proxy whose push has started finishes it before the permit moves on.
    return this.gated(() => this.#pushTypes(types, request));
  }

  /** Builds and sends `types` in order, holding the push's permit; counts the proxy converged once any went. */
  async #pushTypes(types: readonly string[], request: PushRequest): Promise<void> {
    const kinds = this.ctx.changedKinds.of(request);
    // A handful of types at most: a list costs a push less than a set.
    const sent: string[] = [];
    for (const typeUrl of types) {
      if (this.closed) break;
      // A type here only because the one it follows might be sent: it goes only if that one went.
      const after = resentAfter(typeUrl);
      if (request.full && !this.#touched(typeUrl, kinds) && (after === undefined || !sent.includes(after))) {
        this.recordUnchanged(typeUrl, this.ctx.currentPush().version);
        continue;
      }
      if (await this.pushType(typeUrl, request, sent)) sent.push(typeUrl);
    }
    if (sent.length > 0) this.ctx.metrics.convergence((performance.now() - request.start) / 1000);
  }

  /**
   * The watched types a push must build, in push order. An endpoint-only push builds EDS alone. A full push
   * of known changes builds the types whose generator the changed kinds may affect
   * ({@link XdsGenerator.unaffectedBy}, as the reference decides from the kinds that changed), a type the proxy
   * rejected last (it is resent whatever changed), and EDS or RDS behind a CDS or LDS built (Envoy warms what
   * they update until those follow); the others' last responses stand for the new snapshot
   * ({@link recordUnaffected}). Unknown changes and a forced push build every watched type.
   */
  pushTypes(request: PushRequest): readonly string[] {
    const watched = this.watchedTypes();
    if (!request.full) return watched.has(TYPE_URL.endpoint) ? ENDPOINTS_ONLY : NO_TYPES;
    const all = pushOrder(watched.keys());
    const kinds = this.ctx.changedKinds.of(request);
    if (kinds === undefined || isForced(request)) return all;
    return all.filter((typeUrl) => {
      if (this.#touched(typeUrl, kinds)) return true;
      const after = resentAfter(typeUrl);
      return after !== undefined && watched.has(after) && this.#touched(after, kinds);
    });
  }

  /**
   * Records that push `pushVersion` left every watched type but `except` as the proxy holds it (their last
   * responses stand for that version, as {@link recordUnchanged} says).
   */
  recordUnaffected(pushVersion: string, except: readonly string[] = []): void {
    for (const typeUrl of this.watchedTypes().keys()) {
      if (!except.includes(typeUrl)) this.recordUnchanged(typeUrl, pushVersion);
    }
  }

  /** True when a full push that changed `kinds` must build `typeUrl`: they may affect it, or it was rejected. */
  #touched(typeUrl: string, kinds: ReadonlySet<string> | undefined): boolean {
    const generator = this.ctx.generators.find(this.proxy, typeUrl);
    if (generator === undefined || mayAffect(generator, this.proxy, kinds)) return true;
    return this.acks.rejectedLatest(typeUrl);
  }

  /**
   * Runs `work` holding its HTTP/2 connection's turn and then a response-gate permit: a permit never waits
   * behind a sibling stream's bytes, and a connection of many streams cannot take the permits of the rest.
   */
  protected gated<T>(work: () => Promise<T>): Promise<T> {
    if (this.#admit === undefined) return this.ctx.gate.run(work);
    return this.ctx.gate.run(work, this.#admit);
  }

  /** The watches of this connection by type URL. */
  protected abstract watchedTypes(): ReadonlyMap<string, unknown>;

  /**
   * Builds and sends `typeUrl` for a push, from the newest snapshot at that moment (which may be newer than
   * the request's: a cache entry is never built from a snapshot older than the invalidation that preceded
   * it, and a newer snapshot queues its own push); `sentBefore` holds the types this push already sent.
   * Resolves once the response has left: true, or false when nothing was sent. (The build may span turns of
   * the loop, in the response gate's slices, so whether anything is sent is known only once it is built.)
   */
  protected abstract pushType(
    typeUrl: string,
    request: PushRequest,
    sentBefore: readonly string[],
  ): Promise<boolean>;

  /** Watched names per type URL; `["*"]` for a wildcard watch. */
  abstract watches(): Record<string, readonly string[]>;

  /** Runs `work` after every earlier piece of work on this connection has finished. */
  serialize<T>(work: () => Promise<T>): Promise<T> {
    this.#queuedWork++;
    const next = this.#chain.then(() => this.#closed ? undefined as T : work());
    this.#chain = next.then(this.#workDone, this.#workDone);
    return next;
  }

  /** True when no work is queued or running on this connection. */
  get idle(): boolean {
    return this.#queuedWork === 0;
  }

  /**
   * Takes a request that only acknowledges the latest response at once, without queuing work: true when
   * `request` was such an ACK and is recorded. Call only while the connection is {@link idle}, so nothing it
   * would have waited behind is pending; false leaves the request to {@link handleRequest}.
   */
  acceptAck(_request: unknown): boolean {
    return false;
  }

  /** Nonce/version state per type URL. */
  syncStatus(): Record<string, Readonly<TypeSync>> {
    return this.acks.status();
  }

  /** What was last sent per type URL. */
  sentResources(): Map<string, SentResources> {
    const out = new Map<string, SentResources>();
    for (const [type, resources] of this.#sent) {
      out.set(type, {
        version: this.acks.versionSent(type) ?? "",
        nonce: this.acks.nonceSent(type) ?? "",
        resources: resources.toMap(),
      });
    }
    return out;
  }

  /** Adds what the proxy holds to `held`, skipping shared lists already in `lists` ({@link SentRecord.collectHeld}). */
  collectHeld(held: Set<VersionedResource>, lists: Set<readonly VersionedResource[]>): void {
    for (const record of this.#sent.values()) record.collectHeld(held, lists);
  }

  /** Ends the stream with a status (OK ends it normally); idempotent. */
  close(code: grpc.status = grpc.status.OK, details = "OK"): void {
    if (this.#closed) return;
    this.#markClosed();
    try {
      this.#port.close(code, details);
    } catch (error) {
      this.ctx.logger.debug("ending ADS stream failed", { connection: this.id, error: String(error) });
    }
  }

  /** Marks the connection closed after the peer went away; nothing is written. */
  closedByPeer(): void {
    if (!this.#closed) this.#markClosed();
  }

  /** A send outlived `DISCOVERY_XDS_SEND_TIMEOUT` (the port has failed it): counted, logged, stream ended. */
  #sendTimedOut(error: SendTimeoutError): void {
    this.ctx.metrics.writeTimeout();
    this.ctx.logger.warn("ending the stream of a proxy that does not take its responses", {
      connection: this.id,
      type: shortTypeName(error.what),
      timeoutMs: error.timeoutMs,
    });
    this.close(grpc.status.DEADLINE_EXCEEDED, `Timed out sending "${shortTypeName(error.what)}" response`);
  }

  /** A fresh nonce source's version prefix: the push version when tracking, else none. */
  protected nonceVersionFor(pushVersion: string): string | undefined {
    return this.ctx.tracker === undefined ? undefined : pushVersion;
  }

  /** Forgets a type the proxy unsubscribed from. */
  protected forgetType(typeUrl: string): void {
    this.acks.forget(typeUrl);
    this.#sent.delete(typeUrl);
  }

  /** Records a sent response and the resources it carried (`replace`: the response was the full set). */
  protected recordSent(
    typeUrl: string,
    version: string,
    nonce: string,
    resources: readonly VersionedResource[],
    options: { replace: boolean; removed?: readonly string[]; keep?: readonly string[] },
  ): void {
    this.acks.sent(typeUrl, version, nonce);
    let record = this.#sent.get(typeUrl);
    if (record === undefined) {
      record = new SentRecord(this.ctx.lists);
      this.#sent.set(typeUrl, record);
    }
    const { keep, removed = NO_TYPES } = options;
    // A full answer, or a state-of-the-world answer that covers every watched name: the list as sent.
    if (
      options.replace ||
      (keep !== undefined && removed.length === 0 && this.ctx.lists.covers(resources, keep))
    ) {
      record.replace(resources, keep);
      return;
    }
    for (const r of resources) record.set(r);
    for (const name of removed) record.delete(name);
    if (keep !== undefined) record.retain(keep);
  }

  /**
   * True when the proxy holds exactly `resources` of `typeUrl`: it was sent them ({@link SentRecord.holdsExactly})
   * and did not reject the latest response (a proxy that NACKed still holds an older one, and what it could
   * not apply then, a secret not yet there, it may now).
   */
  protected holdsSent(typeUrl: string, resources: readonly VersionedResource[]): boolean {
    if (this.acks.rejectedLatest(typeUrl)) return false;
    return this.#sent.get(typeUrl)?.holdsExactly(resources) ?? false;
  }

  /** Drops resources the proxy no longer holds from the record of what was sent. */
  protected dropSent(typeUrl: string, names: Iterable<string>): void {
    const record = this.#sent.get(typeUrl);
    if (record !== undefined) { for (const name of names) record.delete(name); }
  }

  /** Records an ACK of the latest response of a type, and the version it applied when tracking. */
  protected recordAck(typeUrl: string, nonce: string, version: string): void {
    const pushVersion = this.acks.acked(typeUrl, nonce, version);
    if (this.ctx.tracker !== undefined && pushVersion !== undefined) {
      this.ctx.tracker.recordAck(this.id, this.proxy.id, typeUrl, pushVersion);
    }
  }

  /**
   * Records that push `pushVersion` had nothing new of `typeUrl` for the proxy: what it was last sent stands
   * for that version too, so config distribution counts the type as at that version once the proxy ACKs it
   * (at once when it already has; a NACKed response stays unacknowledged). `held`, a whole generation equal
   * to what was sent, replaces the sent list in the record, so the older one can be collected: the caches
   * hold the newer, and keeping both kept two generations of every proxy's list alive.
   */
  protected recordUnchanged(
    typeUrl: string,
    pushVersion: string,
    held?: { readonly resources: readonly VersionedResource[]; readonly keep?: readonly string[] },
  ): void {
    if (held !== undefined) this.#sent.get(typeUrl)?.replace(held.resources, held.keep);
    if (this.acks.unchanged(typeUrl, pushVersion) && this.ctx.tracker !== undefined) {
      this.ctx.tracker.recordAck(this.id, this.proxy.id, typeUrl, pushVersion);
    }
  }

  /**
   * Records a NACK: counted, logged through the server's NACK log (paced per proxy, the text cut), never
   * resent; kept in the type's bookkeeping ({@link AckTracker.nacked}).
   */
  protected recordNack(typeUrl: string, nonce: string, status: RpcStatus): void {
    const code = grpcCodeName(status.code);
    this.acks.nacked(typeUrl, nonce, code, status.message);
    this.ctx.metrics.rejected(typeUrl, this.proxy.id, status.code);
    this.ctx.nacks.record(this.proxy.id, {
      connection: this.id,
      type: excerpt(shortTypeName(typeUrl)),
      nonce: excerpt(nonce),
      code,
      error: status.message,
    });
  }

  /** True when `nonce` is the latest one sent for `typeUrl`. */
  protected isLatestNonce(typeUrl: string, nonce: string): boolean {
    return this.acks.isLatestNonce(typeUrl, nonce);
  }

  #markClosed(): void {
    this.#closed = true;
    this.nameBudget.close();
    this.#whenClosed.resolve();
    this.#port.peerGone();
    this.ctx.onClosed(this);
  }

  /**
   * Sends one response through the stream's port and counts it: a failed send as `senderr`, a done one with
   * its send time and its build-plus-send time.
   *
   * @throws {SendTimeoutError} after `DISCOVERY_XDS_SEND_TIMEOUT` (the stream has been ended)
   * @throws {StreamClosedError} when the stream closes first
   */
  protected async sendCounted(typeUrl: string, bytes: Uint8Array, builtMs: number): Promise<void> {
    const started = performance.now();
    try {
      await this.#port.send(bytes, typeUrl);
    } catch (error) {
      this.ctx.metrics.pushFailed(typeUrl, "senderr");
      throw error;
    }
    const sentMs = performance.now() - started;
    this.ctx.metrics.sendTime(typeUrl, sentMs / 1000);
    this.ctx.metrics.pushed(typeUrl);
    this.ctx.metrics.pushTime(typeUrl, (builtMs + sentMs) / 1000);
  }
}

/**
 * Generates one type for one connection, in the response gate's slices ({@link ResponseBuilds}). A generator
 * failure is counted and logged with the connection and type, and yields "failed": the proxy keeps its last
 * config. Undefined means no generator serves the type.
 */
export async function generateForConnection<P extends PushSnapshot>(
  ctx: ConnectionContext<P>,
  connectionId: string,
  proxy: Proxy,
  typeUrl: string,
  push: P,
  request: GenerateRequest,
): Promise<readonly VersionedResource[] | undefined | "failed"> {
  try {
    const reported = ctx.conflicts === undefined ? request : { ...request, conflicts: ctx.conflicts };
    return await ctx.builds.build(ctx, proxy, typeUrl, push, reported);
  } catch (error) {
    if (!(error instanceof GenerateError)) throw error;
    ctx.metrics.pushFailed(typeUrl, "builderr");
    ctx.metrics.internalError(typeUrl);
    ctx.logger.error("generating config failed; the proxy keeps its last config", {
      connection: connectionId,
      type: shortTypeName(typeUrl),
      error: error.message,
    });
    return "failed";
  }
}
