/**
 * The xDS proxy on a Unix socket: each ADS stream the proxy opens is relayed to the discovery server over TLS
 * with the workload certificate (or plaintext when the control plane auth policy is NONE). The proxy's stream
 * outlives its upstream: when the upstream stream fails, or a new workload certificate makes the agent
 * reconnect, a new upstream stream is opened (with backoff) and the proxy's latest request of each type is sent
 * again without its nonce, so the server answers with the full state and the proxy never sees the outage.
 * Responses reach the proxy through its stream's send port: a proxy that does not read one within
 * `PROXY_SEND_TIMEOUT_MS`, or leaves more than `MAX_HELD_RESPONSE_BYTES` unread, has its stream ended; one
 * whose requests the discovery server leaves `MAX_UNANSWERED_REQUEST_BYTES` unanswered is not read until it
 * answers.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import { ADS_SERVICE_DEFINITION } from "@mesh/proto/ads_service";
import type { Logger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import { releaseClientDecodedChunks, type RunningGrpcServer, startGrpcServer } from "@mesh/shared/grpc";
import { StreamClosedError } from "@mesh/shared/grpc/send_port";
import { proxySendPorts } from "./proxy_send_ports.ts";
import { systemTimers, type Timers } from "@mesh/shared/time/timers";
import { excerpt } from "@mesh/shared/log/excerpt";
import { PEER_LOG_PERIOD_MS, PeerLogLimiter } from "@mesh/shared/log/peer_log_limiter";
import type { SecretProvider } from "./workload_secrets.ts";
import type { XdsSnapshotWriter } from "./xds_snapshot.ts";
import { NameTableStream, type NameTableSubscription } from "./name_table_stream.ts";
import { readDiscoveryRequest, REQUEST_FIELD, rewriteFields } from "./discovery_wire.ts";

/** What a replayed request leaves out: the old server's nonce and rejection (and the node, given once). */
const NOT_REPLAYED: ReadonlySet<number> = new Set([REQUEST_FIELD.responseNonce, REQUEST_FIELD.errorDetail]);
const NODE_AND_NOT_REPLAYED: ReadonlySet<number> = new Set([...NOT_REPLAYED, REQUEST_FIELD.node]);

/**
 * Types whose latest request one proxy stream keeps for replay. Envoy subscribes to about ten; the type URL is
 * the proxy's to choose, and each kept request may be as large as a message, so a new type past this is
 * relayed and not kept.
 */
export const MAX_REPLAYED_TYPES = 32;

/**
 * Bytes of upstream responses one proxy stream may hold in the agent while its proxy has not read them. The
 * runtime's HTTP/2 client grants the discovery server credit whether or not the relay reads, so the relay
 * cannot slow the server down: past this, the proxy's stream is ended (RESOURCE_EXHAUSTED) and the proxy,
 * which reconnects, gets the current state again. It holds a full push of a large mesh, so a proxy that
 * reads only ends its stream through the send timeout; a single response is always relayed, however long.
 */
export const MAX_HELD_RESPONSE_BYTES = 64 * 1024 * 1024;

/**
 * Bytes of the proxy's requests relayed on one upstream stream since that stream last answered, past which the
 * relay stops reading the proxy's stream until it answers (or is replaced). The runtime's HTTP/2 client takes
 * every write whether or not the discovery server reads, so without it a proxy writing to a stalled upstream
 * grew the agent by what it wrote (+302 MiB for 256 MiB, `bench/relay_request_flood.ts`). Envoy sends a request per response it takes, and a handful to
 * subscribe: it never comes near this; the proxy is slowed by HTTP/2 flow control, nothing is dropped.
 */
export const MAX_UNANSWERED_REQUEST_BYTES = 4 * 1024 * 1024;

/** Where the relay goes. */
export interface XdsUpstream {
  /** `host:port` of the discovery server. */
  readonly address: string;
  /** Mutual TLS with the workload certificate; false for plaintext. */
  readonly mutualTls: boolean;
  /** The TLS name to check on the discovery server's certificate. */
  readonly serverName: string;
  /** Roots for the discovery server's certificate (`XDS_ROOT_CA`); absent: the workload secret's roots. */
  readonly rootPem?: string;
}

/** Options of the xDS proxy. */
export interface XdsProxyOptions {
  /** The Unix socket path. */
  readonly socket: string;
  readonly upstream: XdsUpstream;
  readonly secrets: SecretProvider;
  readonly log: Logger;
  /** `MESH_GPRC_MAXRECVMSGSIZE`: the largest message taken from either side, bytes. */
  readonly maxReceiveMessageBytes: number;
  /** `LOCAL_XDS_GENERATOR_CONFIG_SAVE_PATH`: keeps the latest response of each type on disk. */
  readonly snapshot?: XdsSnapshotWriter;
  /**
   * With DNS capture: the agent's own subscription to the name table on each upstream stream. Name table
   * responses go here and are acknowledged by the agent; the proxy never sees them.
   */
  readonly nameTable?: NameTableSubscription;
  /** The jitter source of the upstream backoff, [0, 1); default `Math.random`. */
  readonly random?: () => number;
  /** Where requests, responses, stream ends and reconnects are counted (`xds_proxy_*`, `*_connection_*`). */
  readonly metrics?: Metrics;
  /** How long the proxy may take to read one response before its stream is ended; default `PROXY_SEND_TIMEOUT_MS`. */
  readonly sendTimeoutMs?: number;
  /** Times the send timeout; default the runtime's. */
  readonly timers?: Timers;
  /** Bytes of responses a proxy stream may hold unread; default {@link MAX_HELD_RESPONSE_BYTES}. */
  readonly maxHeldResponseBytes?: number;
  /**
   * Bytes of requests relayed without an answer before the proxy's stream is paused; default
   * {@link MAX_UNANSWERED_REQUEST_BYTES}.
   */
  readonly maxUnansweredRequestBytes?: number;
}

/** The reference's `type` label of a stream's end: a cancellation, or anything else. */
function terminationType(code: number | undefined): string {
  return code === grpc.status.CANCELLED ? "cancelled" : "error";
}

/**
 * Backoff between upstream attempts: doubling from `first` to `max`, each wait drawn within `jitter` of its
 * step so the agents of a restarted discovery server do not all come back at once.
 */
export const UPSTREAM_BACKOFF_MS = { first: 200, max: 15_000, jitter: 0.2 } as const;

/**
 * The wait before upstream attempt `attempt` (1 after the first loss): `first` doubled per attempt, within
 * ±`jitter` of that step, never past `max`. `random` returns [0, 1).
 */
export function upstreamRetryDelayMs(attempt: number, random: () => number): number {
  const { first, max, jitter } = UPSTREAM_BACKOFF_MS;
  const step = Math.min(first * 2 ** Math.min(Math.max(attempt - 1, 0), 30), max);
  return Math.min(Math.round(step * (1 - jitter + 2 * jitter * random())), max);
}

type Stream = grpc.ClientDuplexStream<Buffer, Buffer>;

/** Relays ADS from `options.socket` to `options.upstream`. */
export async function startXdsProxy(options: XdsProxyOptions): Promise<RunningGrpcServer> {
  const { upstream, secrets, log, metrics } = options;
  const random = options.random ?? Math.random;
  const Client = grpc.makeClientConstructor(ADS_SERVICE_DEFINITION, "AggregatedDiscoveryService");
  let client: grpc.Client | undefined;
  let clientFor: unknown;
  const channel = (): grpc.Client => {
    const secret = secrets.current;
    // A new certificate means a new channel: the next stream presents it.
    if (client !== undefined && clientFor === secret) return client;
    client?.close();
    const credentials = upstream.mutualTls && secret !== undefined
      ? grpc.credentials.createSsl(
        Buffer.from(upstream.rootPem ?? secret.rootPem),
        Buffer.from(secret.privateKeyPem),
        Buffer.from(secret.certChainPem),
      )
      : grpc.credentials.createInsecure();
    client = new Client(upstream.address, credentials, {
      ...(upstream.mutualTls ? { "grpc.ssl_target_name_override": upstream.serverName } : {}),
      "grpc.max_receive_message_length": options.maxReceiveMessageBytes,
      // The channel's own reconnect backoff (grpc-js: up to 120 s) would otherwise outlast the relay's after
      // a long outage: every attempt would fail at once until the channel tried the server again.
      "grpc.initial_reconnect_backoff_ms": UPSTREAM_BACKOFF_MS.first,
      "grpc.max_reconnect_backoff_ms": UPSTREAM_BACKOFF_MS.max,
    });
    clientFor = secret;
    return client;
  };
  /** The relayed streams: one, but for a moment while a newer one replaces it. */
  const relays = new Set<{ reconnect(reason: string, label: string): void; supersede(): void }>();
  // A proxy that sends garbage or endless types costs one line of each kind a period, not one per request.
  const logLimiter = new PeerLogLimiter(PEER_LOG_PERIOD_MS, () => (options.timers ?? systemTimers).now());
  const ports = proxySendPorts(options.timers, options.sendTimeoutMs);
  const maxHeldBytes = options.maxHeldResponseBytes ?? MAX_HELD_RESPONSE_BYTES;
  const maxUnansweredBytes = options.maxUnansweredRequestBytes ?? MAX_UNANSWERED_REQUEST_BYTES;
  let streamsOpened = 0;
  const unsubscribe = secrets.onChange(() => {
    for (const relay of relays) relay.reconnect("new workload certificate", "new_certificate");
  });

  const implementation = {
    StreamAggregatedResources(down: grpc.ServerDuplexStream<Buffer, Buffer>) {
      // A relayed response still has the gRPC prefix it arrived with in front of it: the port sends it to the
      // proxy uncopied, and a large one in slices, so the proxy's stream never holds a whole configuration.
      const port = ports.open(down, `xds-proxy-${++streamsOpened}`, (error) => {
        log.warn("ending the ADS stream of a proxy that does not read its responses", {
          error: error.message,
        });
        port.close(grpc.status.DEADLINE_EXCEEDED, "Timed out sending a response");
      });
      const sent = (error: Error) => {
        if (!(error instanceof StreamClosedError)) {
          log.debug("relaying a response failed", { error: error.message });
        }
      };
      if (upstream.mutualTls && secrets.current === undefined) {
        port.close(grpc.status.UNAVAILABLE, "No workload certificate yet; retry");
        return;
      }
      let up: Stream | undefined;
      let closed = false;
      /** Bytes of responses handed to the port that have not left the socket (or failed). */
      let heldBytes = 0;
      /** Bytes of requests written to `up` since it last answered; the proxy's stream is paused past the bound. */
      let unansweredBytes = 0;
      let pausedProxy = false;
      const upstreamMoved = () => {
        unansweredBytes = 0;
        if (!pausedProxy) return;
        pausedProxy = false;
        down.resume();
      };
      let failures = 0;
      let retryTimer: ReturnType<typeof setTimeout> | undefined;
      /** The `node` field of the proxy's latest request that carried one, encoded. */
      let node: Uint8Array | undefined;
      const nameTable = options.nameTable === undefined
        ? undefined
        : new NameTableStream(options.nameTable, log);
      /** The proxy's latest request of each type, without nonce and rejection, replayed on a new upstream stream. */
      const latest = new Map<string, Uint8Array>();

      const replay = (stream: Stream) => {
        let first = true;
        for (const request of latest.values()) {
          // As Envoy asks on a new stream: the version it holds, no nonce (the old server's nonces mean nothing
          // to the new one, which answers a request without a nonce with its full state) and no rejection (which
          // the new server would record and leave unanswered); the first carries the node.
          const bytes = first && node !== undefined
            ? rewriteFields(request, NODE_AND_NOT_REPLAYED, node)
            : request;
          first = false;
          stream.write(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
        }
      };
      const open = (isReplay: boolean) => {
        if (closed) return;
        const stream: Stream = (channel() as unknown as { StreamAggregatedResources(): Stream })
          .StreamAggregatedResources();
        // grpc-js would keep each response's frames until the next: an unscoped sidecar's CDS, megabytes.
        releaseClientDecodedChunks(stream);
        up = stream;
        upstreamMoved();
        let answered = false;
        stream.on("data", (data: Buffer) => {
          // A stream ended under a burst of responses relays none of the rest.
          if (closed || port.closed) return;
          answered = true;
          if (up === stream) upstreamMoved();
          if (failures > 0) {
            log.info("upstream ADS stream back; the proxy's subscriptions were replayed", {
              attempts: failures,
              types: latest.size,
            });
            failures = 0;
          }
          if (nameTable?.take(data, stream)) return;
          options.snapshot?.record(data);
          metrics?.counter("xds_proxy_responses").inc();
          if (heldBytes > 0 && heldBytes + data.length > maxHeldBytes) {
            log.warn("ending the ADS stream of a proxy that is not reading its responses", {
              heldBytes,
              maxHeldBytes,
            });
            port.close(grpc.status.RESOURCE_EXHAUSTED, "Too many unread responses; reconnect");
            return;
          }
          heldBytes += data.length;
          port.send(data, "ADS response").then(
            () => void (heldBytes -= data.length),
            (error: Error) => {
              heldBytes -= data.length;
              sent(error);
            },
          );
        });
        const lost = (details: string, code?: number) => {
          if (up !== stream || closed) return;
          up = undefined;
          // As the reference counts them: a stream that never answered is a failed connection.
          if (answered) {
            metrics?.counter("meshd_connection_terminations").inc({ type: terminationType(code) });
          } else {
            metrics?.counter("meshd_connection_failures").inc();
          }
          failures++;
          const waitMs = upstreamRetryDelayMs(failures, random);
          if (failures === 1 || failures % 10 === 0) {
            log.warn("upstream ADS stream lost; keeping the proxy's stream and reconnecting", {
              details,
              attempt: failures,
              retryMs: waitMs,
            });
          }
          retryTimer = setTimeout(() => {
            metrics?.counter("xds_proxy_upstream_reconnects").inc({ reason: "upstream_lost" });
            open(true);
          }, waitMs);
        };
        stream.on("error", (error: grpc.ServiceError) => lost(`${error.code}: ${error.details}`, error.code));
        stream.on("end", () => lost("the server ended the stream"));
        nameTable?.opened();
        if (isReplay) replay(stream);
        // A replay's first request carried the node: the subscription can follow at once.
        if (isReplay && latest.size > 0) nameTable?.subscribe(stream);
      };
      const relay = {
        reconnect(reason: string, label: string) {
          if (closed) return;
          log.info("reconnecting the upstream ADS stream", { reason });
          metrics?.counter("xds_proxy_upstream_reconnects").inc({ reason: label });
          clearTimeout(retryTimer);
          const old = up;
          up = undefined;
          old?.cancel();
          failures = 0;
          open(true);
        },
        supersede() {
          finish();
          port.close(grpc.status.UNAVAILABLE, "A newer ADS stream from the proxy replaced this one");
        },
      };
      // One stream at a time, as the reference keeps it: each holds the proxy's subscriptions, an upstream
      // stream and what it has not read, and a local client opening stream after stream would hold them all.
      for (const older of relays) {
        logLimiter.log(
          "superseded",
          (passedOver) =>
            log.warn("a new ADS stream from the proxy replaces the one before", {
              ...(passedOver > 0 && { passedOver }),
            }),
        );
        older.supersede();
      }
      relays.add(relay);
      down.on("data", (data: Buffer) => {
        try {
          const request = readDiscoveryRequest(data);
          if (request.node !== undefined) node = request.node;
          if (latest.has(request.typeUrl) || latest.size < MAX_REPLAYED_TYPES) {
            latest.set(request.typeUrl, rewriteFields(data, NOT_REPLAYED));
          } else {
            logLimiter.log(
              "types",
              (passedOver) =>
                log.warn(
                  "the proxy asked for more types than a stream keeps for replay; relaying it unkept",
                  {
                    type: excerpt(request.typeUrl),
                    max: MAX_REPLAYED_TYPES,
                    passedOver,
                  },
                ),
            );
          }
        } catch (error) {
          logLimiter.log(
            "malformed",
            (passedOver) =>
              log.warn("the proxy sent a request that is not a DiscoveryRequest; relaying it as is", {
                error: (error as Error).message,
                passedOver,
              }),
          );
        }
        metrics?.counter("xds_proxy_requests").inc();
        if (up !== undefined) {
          up.write(data);
          unansweredBytes += data.length;
          if (unansweredBytes > maxUnansweredBytes && !pausedProxy) {
            pausedProxy = true;
            down.pause();
            logLimiter.log(
              "unanswered",
              (passedOver) =>
                log.warn(
                  "the proxy's requests wait for the discovery server to answer; reading them paused",
                  {
                    unansweredBytes,
                    maxUnansweredBytes,
                    ...(passedOver > 0 && { passedOver }),
                  },
                ),
            );
          }
          // The agent's own request follows the proxy's first, which carries the node.
          nameTable?.subscribe(up);
        }
      });
      const finish = () => {
        if (closed) return;
        closed = true;
        port.peerGone();
        relays.delete(relay);
        clearTimeout(retryTimer);
        up?.cancel();
        up = undefined;
      };
      // An error or a cancellation is counted once, even after the half-close the runtime reports for a reset.
      let terminated = false;
      down.on("end", () => {
        up?.end();
        finish();
        port.close();
      });
      const terminate = (type: string) => {
        if (!terminated) metrics?.counter("envoy_connection_terminations").inc({ type });
        terminated = true;
        finish();
      };
      down.on("cancelled", () => terminate("cancelled"));
      down.on("error", () => terminate("error"));
      down.on("close", finish);
      open(false);
    },
  };
  const server = await startGrpcServer({
    name: "XDS proxy",
    listen: { unix: options.socket, flag: "the XDS socket" },
    services: [{ definition: ADS_SERVICE_DEFINITION, implementation: implementation as never }],
    limits: { maxReceiveMessageBytes: options.maxReceiveMessageBytes },
    logger: log,
  });
  return {
    ...server,
    close: async (graceMs?: number) => {
      unsubscribe();
      await server.close(graceMs);
      client?.close();
      await options.snapshot?.flush();
    },
  };
}
