/**
 * The ADS server: the connected proxies, the newest push snapshot, the encoded-resource cache and the push
 * queue (not to be confused with the registries' `ServiceDiscovery`). The push debouncer's output calls `push`; the gRPC transport calls `handleStream` and
 * `handleDeltaStream`; the debug interface reads `connections()` and friends.
 *
 * @module
 */
import * as grpc from "@grpc/grpc-js";
import type protobuf from "protobufjs";
import type { ControlPlaneInfo } from "@mesh/proto/discovery_frame";
import { loadEnvoySchema } from "@mesh/proto/envoy_schema";
import type { Logger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import type { PeerDrop } from "@mesh/shared/grpc/peer_guard";
import type { AdmissionRefusal } from "@mesh/shared/grpc/grpc_admission";
import type { Proxy } from "../model/proxy.ts";
import {
  mergePushRequests,
  type PushRequest,
  pushRequest,
  type TriggerReason,
} from "../push/push_request.ts";
import { serveAdsStream, type StreamCaller, type StreamHost } from "./ads_stream.ts";
import { DeltaConnection } from "./delta_connection.ts";
import { DistributionTracker } from "./distribution_tracker.ts";
import type { GeneratorRegistry, PushSnapshot } from "../generate/generator.ts";
import { PushQueue, type PushQueueStats } from "./push_queue.ts";
import { ShapeMemo } from "./shape_memo.ts";
import { ListMemos } from "./list_memos.ts";
import { NonceSource } from "./nonce.ts";
import { ChangedKinds } from "./changed_kinds.ts";
import { SendDeadlines } from "@mesh/shared/grpc/send_deadlines";
import { SendPorts, SendTimeoutError, StreamClosedError } from "@mesh/shared/grpc/send_port";
import { ResponseGate, type ResponseGateStats } from "./response_gate.ts";
import { ResponseBuilds } from "./response_builds.ts";
import { OutboundTurns } from "@mesh/shared/grpc/outbound_turns";
import { NameInterner } from "./name_interner.ts";
import type { MemoStats } from "@mesh/shared/memo/memo_stats";
import { NameListTable } from "./name_list_table.ts";
import { NameBudgets } from "./name_budget.ts";
import { NackLog } from "./nack_log.ts";
import { ConnectionLog } from "./connection_log.ts";
import { SotwConnection } from "./sotw_connection.ts";
import { XdsCache } from "./xds_cache.ts";
import type { AdsCall, ConnectionContext, XdsConnection, XdsProtocol } from "./xds_connection.ts";
import { XdsMetrics } from "./xds_metrics.ts";
import { SnapshotConflicts } from "./snapshot_conflicts.ts";
import type { XdsSettings } from "./xds_settings.ts";
import type { PushHistory } from "../push/push_history.ts";
import type { Timers } from "@mesh/shared/time/timers";
import { UnheldRelease } from "./unheld_release.ts";
import type { VersionedResource } from "./versioned_resource.ts";

/** Collaborators and settings of a AdsServer. */
export interface AdsServerOptions<P extends PushSnapshot> {
  /** Generators by type URL and flavour. */
  readonly generators: GeneratorRegistry<P>;
  /** xDS settings, read once from the environment. */
  readonly settings: XdsSettings;
  /** Logger of connections and pushes. */
  readonly logger: Logger;
  /** The program's metrics; omitted, nothing is recorded. */
  readonly metrics?: Metrics;
  /** Envoy's schema; loaded once when omitted. */
  readonly schema?: protobuf.Root;
  /** Sent as `control_plane` in every response when given. */
  readonly controlPlane?: ControlPlaneInfo;
  /** The first snapshot; until one exists, streams are refused with UNAVAILABLE. */
  readonly initialPush?: P;
  /**
   * Why streams are refused with UNAVAILABLE for now although a snapshot exists (the sources have not synced);
   * undefined admits them. Absent, the first snapshot is enough.
   */
  readonly waiting?: () => string | undefined;
  /** Monotonic milliseconds for NACK pacing and the response gate's slices; `performance.now` if omitted. */
  readonly now?: () => number;
  /** Gets every completed proxy push (count and time), for the debug overview. */
  readonly pushHistory?: PushHistory;
  /** Drive the sweeps of {@link AdsServer.startReleasingUnheld}; the runtime's when omitted. */
  readonly timers?: Timers;
}

/** Called when a proxy connects or disconnects. */
export type ConnectionListener<P extends PushSnapshot> = (connection: XdsConnection<P>) => void;

/** Serves ADS streams and pushes configuration to every connected proxy. */
export class AdsServer<P extends PushSnapshot = PushSnapshot> {
  /** Encoded resources shared by every connection. */
  readonly cache: XdsCache;
  /** Present when `DISCOVERY_ENABLE_CONFIG_DISTRIBUTION_TRACKING` is on. */
  readonly tracker?: DistributionTracker;
  /** Generators by type URL and flavour. */
  readonly generators: GeneratorRegistry<P>;
  /** xDS settings the service was built with. */
  readonly settings: XdsSettings;
  readonly #connections = new Map<string, XdsConnection<P>>();
  readonly #queue: PushQueue<XdsConnection<P>, PushRequest>;
  readonly #metrics: XdsMetrics;
  readonly #logger: Logger;
  readonly #schema: protobuf.Root;
  readonly #context: ConnectionContext<P>;
  readonly #host: StreamHost<P>;
  readonly #shapes = new ShapeMemo();
  readonly #lists = new ListMemos();
  readonly #nonces = new NonceSource();
  #connectionsNumbered = 0;
  readonly #onConnect = new Set<ConnectionListener<P>>();
  readonly #onDisconnect = new Set<ConnectionListener<P>>();
  readonly #names: NameInterner;
  readonly #nameLists: NameListTable;
  readonly #nacks: NackLog;
  readonly #connectionLog: ConnectionLog;
  /** ADS streams accepted and not yet ended, admitted or not. */
  #openStreams = 0;
  /** The most streams open at once since the name memos were last emptied. */
  #namesPeak = 0;
  #push: P | undefined;
  readonly #waiting: (() => string | undefined) | undefined;
  #closed = false;
  readonly #release: UnheldRelease;
  /** The listener conflicts the generators report for the newest snapshot. */
  readonly conflicts: SnapshotConflicts;

  /**
   * Builds the cache, the push queue and, when enabled, the distribution tracker; serves nothing until
   * streams arrive.
   */
  constructor(options: AdsServerOptions<P>) {
    this.generators = options.generators;
    this.settings = options.settings;
    this.#logger = options.logger;
    this.#metrics = new XdsMetrics(
      options.metrics,
      options.pushHistory,
      (typeUrl) => options.generators.serves(typeUrl),
    );
    this.#schema = options.schema ?? loadEnvoySchema();
    this.#push = options.initialPush;
    this.#waiting = options.waiting;
    this.conflicts = new SnapshotConflicts(options.metrics);
    if (this.#push !== undefined) this.conflicts.snapshot(this.#push.version);
    this.cache = new XdsCache({
      enabled: options.settings.cacheEnabled,
      maxEntries: options.settings.cacheSize,
      stats: options.settings.cacheStats,
      ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    });
    if (options.settings.distributionTracking) {
      this.tracker = new DistributionTracker(options.settings.distributionRetentionMs);
      if (this.#push !== undefined) this.tracker.recordPush(this.#push.version, undefined);
    }
    this.#queue = new PushQueue({
      throttle: options.settings.pushThrottle,
      merge: (older, newer) => mergePushRequests(older, newer),
      run: (connection, request, queuedMs) => this.#runPush(connection, request, queuedMs),
      groupOf: (connection) => connection.transport,
      onError: (connection, error) => this.#pushFailed(connection, error),
    });
    const names = new NameInterner();
    this.#names = names;
    this.#nameLists = new NameListTable(names, { limits: options.settings });
    this.#release = new UnheldRelease(() => this.releaseUnheld(), undefined, options.timers);
    this.#nacks = new NackLog(this.#logger, { now: options.now ?? (() => performance.now()) });
    this.#connectionLog = new ConnectionLog(this.#logger, options.now);
    const gate = new ResponseGate(options.settings.pushThrottle, options.now ? { now: options.now } : {});
    this.#context = {
      generators: this.generators,
      cache: this.cache,
      schema: this.#schema,
      shapes: this.#shapes,
      conflicts: this.conflicts,
      lists: this.#lists,
      nonces: this.#nonces,
      changedKinds: new ChangedKinds(),
      nextConnectionNumber: () => ++this.#connectionsNumbered,
      gate,
      builds: new ResponseBuilds(gate),
      connectionTurns: new OutboundTurns(),
      names,
      budgets: new NameBudgets({
        maxNameLength: options.settings.maxNameLength,
        maxNamesPerStream: options.settings.maxNamesPerStream,
        maxNameCharsPerConnection: options.settings.maxNameCharsPerConnection,
      }),
      nacks: this.#nacks,
      connectionLog: this.#connectionLog,
      metrics: this.#metrics,
      logger: this.#logger,
      ports: new SendPorts({
        deadlines: new SendDeadlines(options.settings.sendTimeoutMs),
        setting: "DISCOVERY_XDS_SEND_TIMEOUT",
      }),
      ...(this.tracker === undefined ? {} : { tracker: this.tracker }),
      ...(options.controlPlane === undefined ? {} : { controlPlane: options.controlPlane }),
      currentPush: () => {
        if (this.#push === undefined) {
          throw new Error("No push snapshot exists yet; connections are refused until one does");
        }
        return this.#push;
      },
      onClosed: (connection) => this.#unregister(connection),
    };
    this.#host = {
      schema: this.#schema,
      nameLists: this.#nameLists,
      logger: this.#logger,
      notReady: () => this.notReady(),
      admit: (protocol, proxy, call) => this.#admit(protocol, proxy, call),
      internalError: (typeUrl) => this.#metrics.internalError(typeUrl),
      refused: (peer, refusal, notReady) => {
        this.#metrics.refusedStream(refusal.code);
        if (notReady) this.#connectionLog.notReady(peer, refusal.details);
        else this.#connectionLog.refused(peer, refusal.code, refusal.details);
      },
      streamOpened: () => {
        const open = ++this.#openStreams;
        if (open > this.#namesPeak) this.#namesPeak = open;
      },
      streamEnded: () => {
        // The name memos serve the streams there are: once half of the most streams open since they were last
        // emptied have ended (with the last, all), what the streams gone asked for is dropped with them. The
        // streams left find their lists again at their next request: one decoding, then shared as before.
        const open = --this.#openStreams;
        if (open * 2 <= this.#namesPeak) {
          this.#names.clear();
          this.#nameLists.clear();
          this.#namesPeak = open;
        }
      },
    };
  }

  /** Why a new stream would be refused with UNAVAILABLE now, or undefined when it would be admitted. */
  notReady(): string | undefined {
    if (this.#closed) return "the discovery server is shutting down";
    if (this.#push === undefined) return "no configuration snapshot has been built yet";
    return this.#waiting?.();
  }

  /** The newest push snapshot, or undefined before the first one. */
  get pushContext(): P | undefined {
    return this.#push;
  }

  /**
   * Pushes to every connected proxy (the snapshot stage's listener). `push` becomes the newest snapshot; the
   * cache drops the dependents of `configsUpdated`, or everything when a new snapshot arrives with unknown
   * changes.
   */
  push(request: PushRequest, push: P): void {
    if (this.#closed) return;
    const newSnapshot = push !== this.#push;
    this.#shapes.clear();
    if (request.configsUpdated !== undefined) this.cache.invalidate(request.configsUpdated);
    else if (request.full && newSnapshot) this.cache.clear();
    // The debouncer emits in order, so a request's snapshot is never older than the current one; an
    // endpoint-only request usually carries the current one.
    if (newSnapshot) {
      this.#push = push;
      this.conflicts.snapshot(push.version, request);
      this.tracker?.recordPush(push.version, request.configsUpdated);
    }
    for (const connection of this.#connections.values()) {
      // A proxy none of whose types the changes may affect is not queued: no permit, no turn, no promise.
      if (request.full && connection.pushTypes(request).length === 0) {
        connection.recordUnaffected(push.version);
        continue;
      }
      this.#queue.enqueue(connection, request);
    }
  }

  /** A full push of the newest snapshot to every proxy (as `/debug/adsz?push=true` asks); false before one exists. */
  pushAll(reason: TriggerReason = "debug"): boolean {
    if (this.#push === undefined) return false;
    this.push(pushRequest(true, reason, undefined, performance.now()), this.#push);
    return true;
  }

  /** Every open connection, oldest first. */
  connections(): XdsConnection<P>[] {
    return [...this.#connections.values()];
  }

  /** Connections whose proxy id (`pod.namespace`), node id or connection id is `id`. */
  findConnections(id: string): XdsConnection<P>[] {
    return this.connections().filter((c) => c.proxy.id === id || c.proxy.nodeId === id || c.id === id);
  }

  /** Ends the streams of a proxy (the proxy reconnects); returns how many were ended. */
  disconnect(id: string, reason: string): number {
    const matched = this.findConnections(id);
    for (const connection of matched) connection.close(grpc.status.UNAVAILABLE, reason);
    return matched.length;
  }

  /** Calls `listener` for every new connection; returns a function that stops it. */
  onConnect(listener: ConnectionListener<P>): () => void {
    this.#onConnect.add(listener);
    return () => this.#onConnect.delete(listener);
  }

  /** Calls `listener` for every closed connection; returns a function that stops it. */
  onDisconnect(listener: ConnectionListener<P>): () => void {
    this.#onDisconnect.add(listener);
    return () => this.#onDisconnect.delete(listener);
  }

  /**
   * What the server's memos (and the newest snapshot's, when it has any) hold now, for `/debug/cachez`: the
   * shared names and name lists (emptied once half of the most `openStreams` since they were last emptied have
   * ended), the shape memo (cleared on every push); and `derived`: how many answers each table about shared
   * lists worked out (held while their lists live), the connections and nonces this server numbered, and the
   * newest snapshot's generator tables.
   */
  memoStats(): {
    openStreams: number;
    memos: Record<string, MemoStats>;
    derived: Record<string, number>;
  } {
    return {
      openStreams: this.#openStreams,
      memos: {
        names: this.#names.stats(),
        nameLists: this.#nameLists.stats(),
        shapes: this.#shapes.stats(),
        ...this.#push?.memoStats?.(),
      },
      derived: {
        ...this.#lists.stats(),
        connections: this.#connectionsNumbered,
        nonces: this.#nonces.made,
        ...this.#push?.derivedStats?.(),
      },
    };
  }

  /**
   * Sweeps the cache and the shape memo once ({@link XdsCache.sweep}, {@link ShapeMemo.sweep}): what no
   * connected stream holds or used lately is dropped. Returns how many entries and shape prefixes went.
   */
  releaseUnheld(): { entries: number; shapes: number } {
    const held = new Set<VersionedResource>();
    const lists = new Set<readonly VersionedResource[]>();
    for (const connection of this.#connections.values()) connection.collectHeld(held, lists);
    const released = { entries: this.cache.sweep(held), shapes: this.#shapes.sweep() };
    if (released.entries + released.shapes > 0) this.#logger.debug("released unheld memos", released);
    return released;
  }

  /** Sweeps with {@link releaseUnheld} every `UNHELD_RELEASE_PERIOD_MS` until {@link close}. */
  startReleasingUnheld(): void {
    if (!this.#closed) this.#release.start();
  }

  /** Waiting and running pushes. */
  queueStats(): PushQueueStats {
    return this.#queue.stats();
  }

  /** Responses (pushed or asked for) being built and sent, and waiting for a permit. */
  gateStats(): ResponseGateStats {
    return this.#context.gate.stats();
  }

  /** The transport dropped a peer of an xDS port for misbehaving; counted by reason. */
  readonly peerDropped = (drop: PeerDrop): void => this.#metrics.droppedConnection(drop.reason);

  /** An HTTP/2 session of an xDS port closed; counted. */
  readonly sessionClosed = (): void => this.#metrics.closedSession();

  /** A connection or stream of an xDS port was refused past a bound; counted by the bound. */
  readonly admissionRefused = (refusal: AdmissionRefusal, kind: "connection" | "stream"): void =>
    kind === "connection"
      ? this.#metrics.droppedConnection(refusal.reason)
      : this.#metrics.rejectedStream(refusal.reason);

  /** The grpc-js handler of `StreamAggregatedResources`. */
  readonly handleStream = (call: AdsCall, caller?: StreamCaller): void =>
    serveAdsStream(this.#host, "sotw", call, caller);

  /** The grpc-js handler of `DeltaAggregatedResources`. */
  readonly handleDeltaStream = (call: AdsCall, caller?: StreamCaller): void =>
    serveAdsStream(this.#host, "delta", call, caller);

  /** Ends every stream with UNAVAILABLE and stops pushing. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    void this.#release.stop();
    this.#queue.close();
    for (const connection of this.connections()) {
      connection.close(
        grpc.status.UNAVAILABLE,
        "Discovery server is shutting down; reconnect to another one",
      );
    }
  }

  #admit(protocol: XdsProtocol, proxy: Proxy, call: AdsCall): XdsConnection<P> {
    const connection = protocol === "sotw"
      ? new SotwConnection(proxy, call, this.#context)
      : new DeltaConnection(proxy, call, this.#context);
    this.#connections.set(connection.id, connection);
    this.#metrics.connected(1);
    this.#connectionLog.connected(connection, { protocol, node: proxy.nodeId });
    for (const listener of this.#onConnect) this.#callListener(listener, connection);
    return connection;
  }

  #unregister(connection: XdsConnection<P>): void {
    if (!this.#connections.delete(connection.id)) return;
    this.#queue.remove(connection);
    this.#metrics.connected(-1);
    this.tracker?.forget(connection.id);
    if (!this.connections().some((c) => c.proxy.id === connection.proxy.id)) {
      this.#metrics.forgetProxy(connection.proxy.id);
      this.#nacks.forget(connection.proxy.id);
    }
    this.#connectionLog.disconnected(connection);
    for (const listener of this.#onDisconnect) this.#callListener(listener, connection);
  }

  #runPush(connection: XdsConnection<P>, request: PushRequest, queuedMs: number): Promise<void> {
    this.#metrics.queueTime(queuedMs / 1000);
    if (connection.closed || this.#push === undefined) return Promise.resolve();
    return connection.serialize(() => connection.push(request));
  }

  #pushFailed(connection: XdsConnection<P>, error: unknown): void {
    // A timed-out or closed stream has already been counted and ended.
    if (error instanceof SendTimeoutError || error instanceof StreamClosedError) {
      this.#logger.info("push abandoned", { connection: connection.id, error: (error as Error).message });
      return;
    }
    this.#metrics.pushError();
    this.#logger.error("push failed", {
      connection: connection.id,
      error: error instanceof Error ? error.message : String(error),
    });
  }

  #callListener(listener: ConnectionListener<P>, connection: XdsConnection<P>): void {
    try {
      listener(connection);
    } catch (error) {
      this.#logger.error("connection listener failed", { connection: connection.id, error: String(error) });
    }
  }
}
