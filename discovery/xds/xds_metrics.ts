/**
 * The xDS server's metrics, named as the reference names them, behind methods that say what happened.
 *
 * @module
 */
import type { Metrics } from "@mesh/shared/metrics/metrics";
import { grpcCodeName } from "@mesh/shared/grpc/grpc_status";
import { TYPE_URL } from "@mesh/proto/type_urls";
import type { PushHistory } from "../push/push_history.ts";

/** The `type` label of a type URL that no generator serves: a client chooses those, so each is not a series. */
export const OTHER_TYPE = "other";

/** The `type` label of a type URL: "cds", "eds", "lds", "rds", "sds", else the URL itself (as the reference). */
export function metricType(typeUrl: string): string {
  switch (typeUrl) {
    case TYPE_URL.cluster:
      return "cds";
    case TYPE_URL.endpoint:
      return "eds";
    case TYPE_URL.listener:
      return "lds";
    case TYPE_URL.route:
      return "rds";
    case TYPE_URL.secret:
      return "sds";
    default:
      return typeUrl;
  }
}

const REJECT_GAUGES: ReadonlyMap<string, string> = new Map([
  [TYPE_URL.cluster, "discovery_xds_cds_reject"],
  [TYPE_URL.endpoint, "discovery_xds_eds_reject"],
  [TYPE_URL.listener, "discovery_xds_lds_reject"],
  [TYPE_URL.route, "discovery_xds_rds_reject"],
]);

/** The `type` labels of the types every push sends, whose series are bound once (a handful in all). */
const KNOWN_TYPES: readonly string[] = Object.freeze(
  [TYPE_URL.cluster, TYPE_URL.endpoint, TYPE_URL.listener, TYPE_URL.route, TYPE_URL.secret].map(metricType),
);

/** The series of one type that every response moves, bound to its label once. */
interface TypeSeries {
  readonly pushed: { inc(): void };
  readonly pushTime: { observe(value: number): void };
  readonly sendTime: { observe(value: number): void };
}

/**
 * Records what the xDS server does in the program's metrics. A missing registry records nothing. A type URL
 * no generator serves is labelled {@link OTHER_TYPE}: any client of 15010 may send NACKs and stale nonces for
 * types of its own making, and a series per type would grow the registry and every scrape without bound.
 */
export class XdsMetrics {
  /** Reject gauge series per proxy, so a disconnect can remove exactly them. */
  readonly #rejectSeries = new Map<string, Set<string>>();
  /**
   * The per-response series of the known types: an observation through a bound series makes no label
   * object and no closure, and every proxy's every response makes three.
   */
  readonly #typeSeries = new Map<string, TypeSeries>();
  /** The unlabelled per-push histograms, bound once for the same reason. */
  readonly #convergence?: { observe(value: number): void };
  readonly #queueTime?: { observe(value: number): void };
  /** Whether some generator serves a type URL; undefined labels every type URL as itself. */
  readonly #served?: (typeUrl: string) => boolean;

  /**
   * Records into `metrics`; without it every method does nothing. `history`, when given, also gets every
   * completed proxy push, for the debug overview's push chart. `served` says whether a generator serves a
   * type URL, which is then labelled as itself; any other is {@link OTHER_TYPE}.
   */
  constructor(
    readonly metrics?: Metrics,
    readonly history?: PushHistory,
    served?: (typeUrl: string) => boolean,
  ) {
    this.#served = served;
    if (metrics === undefined) return;
    const pushes = metrics.counter("discovery_xds_pushes");
    const pushTime = metrics.histogram("discovery_xds_push_time");
    const sendTime = metrics.histogram("discovery_xds_send_time");
    this.#convergence = metrics.histogram("discovery_proxy_convergence_time").labels();
    this.#queueTime = metrics.histogram("discovery_proxy_queue_time").labels();
    for (const type of KNOWN_TYPES) {
      this.#typeSeries.set(type, {
        pushed: pushes.labels(type),
        pushTime: pushTime.labels(type),
        sendTime: sendTime.labels(type),
      });
    }
  }

  /** The `type` label of `typeUrl`: {@link metricType}'s for a served type, {@link OTHER_TYPE} for any other. */
  #label(typeUrl: string): string {
    return this.#served === undefined || this.#served(typeUrl) ? metricType(typeUrl) : OTHER_TYPE;
  }

  /** The bound series of a known type; undefined for any other (recorded with its label each time). */
  #series(typeUrl: string): TypeSeries | undefined {
    return this.#typeSeries.get(metricType(typeUrl));
  }

  /** A proxy connected (+1) or disconnected (-1). */
  connected(delta: 1 | -1): void {
    this.metrics?.gauge("discovery_xds").inc(delta);
  }

  /** A response of `typeUrl` was sent. */
  pushed(typeUrl: string): void {
    const series = this.#series(typeUrl);
    if (series !== undefined) return series.pushed.inc();
    this.metrics?.counter("discovery_xds_pushes").inc({ type: metricType(typeUrl) });
  }

  /** Building (`builderr`) or sending (`senderr`) a response failed. */
  pushFailed(typeUrl: string, stage: "builderr" | "senderr"): void {
    this.metrics?.counter("discovery_xds_pushes").inc({ type: `${this.#label(typeUrl)}_${stage}` });
  }

  /** A proxy rejected a response: `discovery_total_xds_rejects` and the per-type reject gauge. */
  rejected(typeUrl: string, proxyId: string, code: number): void {
    this.metrics?.counter("discovery_total_xds_rejects").inc({ type: this.#label(typeUrl) });
    const gauge = REJECT_GAUGES.get(typeUrl);
    if (gauge === undefined || this.metrics === undefined) return;
    const err = grpcCodeName(code);
    this.metrics.gauge(gauge).inc({ node: proxyId, err });
    let series = this.#rejectSeries.get(proxyId);
    if (series === undefined) {
      series = new Set();
      this.#rejectSeries.set(proxyId, series);
    }
    series.add(`${gauge} ${err}`);
  }

  /** Drops a disconnected proxy's reject gauge series so their number stays bounded. */
  forgetProxy(proxyId: string): void {
    for (const series of this.#rejectSeries.get(proxyId) ?? []) {
      const [gauge, err] = series.split(" ");
      this.metrics?.gauge(gauge).remove({ node: proxyId, err });
    }
    this.#rejectSeries.delete(proxyId);
  }

  /** A request carried a nonce that is not the latest sent for its type. */
  expiredNonce(typeUrl: string): void {
    this.metrics?.counter("discovery_xds_expired_nonce").inc({ type: this.#label(typeUrl) });
  }

  /** The server ended a stream over what its peer sent: `discovery_xds_refused_streams` by gRPC code. */
  refusedStream(code: number): void {
    this.metrics?.counter("discovery_xds_refused_streams").inc({ code: grpcCodeName(code) });
  }

  /** The transport dropped a connection for misbehaving: `discovery_xds_dropped_connections` by reason. */
  droppedConnection(reason: string): void {
    this.metrics?.counter("discovery_xds_dropped_connections").inc({ reason });
  }

  /** An HTTP/2 session of an xDS port closed: `discovery_xds_closed_sessions`. */
  closedSession(): void {
    this.metrics?.counter("discovery_xds_closed_sessions").inc();
  }

  /** A stream was refused past a stream bound: `discovery_xds_rejected_streams` by reason. */
  rejectedStream(reason: string): void {
    this.metrics?.counter("discovery_xds_rejected_streams").inc({ reason });
  }

  /** A send did not finish within `DISCOVERY_XDS_SEND_TIMEOUT`. */
  writeTimeout(): void {
    this.metrics?.counter("discovery_xds_write_timeout").inc();
  }

  /** A generator threw or produced something that could not be encoded. */
  internalError(typeUrl: string): void {
    this.metrics?.counter("discovery_total_xds_internal_errors").inc({ type: this.#label(typeUrl) });
  }

  /** A push failed outside any one type's generation: `discovery_total_xds_internal_errors{type="push"}`. */
  pushError(): void {
    this.metrics?.counter("discovery_total_xds_internal_errors").inc({ type: "push" });
  }

  /** Seconds to generate, frame and send one response. */
  pushTime(typeUrl: string, seconds: number): void {
    const series = this.#series(typeUrl);
    if (series !== undefined) return series.pushTime.observe(seconds);
    this.metrics?.histogram("discovery_xds_push_time").observe({ type: metricType(typeUrl) }, seconds);
  }

  /** Seconds the transport took to accept one response. */
  sendTime(typeUrl: string, seconds: number): void {
    const series = this.#series(typeUrl);
    if (series !== undefined) return series.sendTime.observe(seconds);
    this.metrics?.histogram("discovery_xds_send_time").observe({ type: metricType(typeUrl) }, seconds);
  }

  /** Seconds from the first change behind a push to the proxy having been sent everything. */
  convergence(seconds: number): void {
    this.#convergence?.observe(seconds);
    this.history?.record(seconds);
  }

  /** Seconds a proxy waited in the push queue. */
  queueTime(seconds: number): void {
    this.#queueTime?.observe(seconds);
  }
}
