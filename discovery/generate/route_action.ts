/**
 * The parts of an Envoy RouteAction built from a VirtualService HTTP route: destination clusters (one, or
 * weighted), timeout, retries, consistent-hash policy, rewrites, and the per-route fault filter config.
 *
 * gRPC's xDS client honours: `cluster`/`weighted_clusters`, `max_stream_duration` (gRFC A31; `timeout` is
 * ignored, so a VirtualService timeout is written to both), `retry_policy` with gRPC status names in
 * `retry_on` (gRFC A44: cancelled, deadline-exceeded, internal, resource-exhausted, unavailable; other
 * conditions and `per_try_timeout` are ignored), `hash_policy` on headers and on the channel id (gRFC A42),
 * and the fault filter (gRFC A33). Rewrites are written for fidelity; gRPC ignores them.
 *
 * @module
 */
import type {
  HTTPFaultInjection,
  HTTPRetry,
  Percent,
} from "@mesh/shared/config/networking/virtual_service_policies";
import type { LoadBalancerSettings } from "@mesh/shared/config/networking/traffic_policy";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { type DurationObject, durationOf, isZeroDuration, ZERO_DURATION } from "./envoy_duration.ts";
import type { EnvoyObject } from "./route_match.ts";

/** The name of the fault filter in the HTTP filter chain and in per-route configs. */
export const FAULT_FILTER_NAME = "envoy.filters.http.fault";

/** The name of the router filter, always last in the chain. */
export const ROUTER_FILTER_NAME = "envoy.filters.http.router";

/** One destination cluster of a route with its share of traffic. */
export interface WeightedCluster {
  /** Cluster name. */
  readonly name: string;
  /** Percent (VirtualService weights); ignored when it is the only cluster. */
  readonly weight: number;
}

/** `cluster` for one destination, `weighted_clusters` (with `total_weight`) for several. */
export function clusterSpecifier(clusters: readonly WeightedCluster[]): EnvoyObject {
  if (clusters.length === 1) return { cluster: clusters[0].name };
  const total = clusters.reduce((sum, c) => sum + c.weight, 0);
  return {
    weighted_clusters: {
      clusters: clusters.map((c) => ({ name: c.name, weight: { value: c.weight } })),
      total_weight: { value: total },
    },
  };
}

/** Istio's retry policy for routes whose VirtualService sets none. */
export const DEFAULT_RETRY_POLICY: EnvoyObject = Object.freeze({
  retry_on: "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes",
  num_retries: { value: 2 },
  retriable_status_codes: [503],
  host_selection_retry_max_attempts: "5",
});

const STATUS_CODE = /^[1-5][0-9][0-9]$/;

/**
 * Envoy's RetryPolicy for a VirtualService retry setting, as Istio converts it: none set → the default policy;
 * `attempts: 0` → no retries; HTTP status codes in `retryOn` become `retriable_status_codes` (adding the
 * `retriable-status-codes` condition).
 */
export function retryPolicy(retries: HTTPRetry | undefined): EnvoyObject | undefined {
  if (retries === undefined) return { ...DEFAULT_RETRY_POLICY };
  const attempts = retries.attempts ?? 0;
  if (attempts <= 0) return undefined;
  const out: EnvoyObject = { ...DEFAULT_RETRY_POLICY, num_retries: { value: attempts } };
  if (retries.retryOn !== undefined && retries.retryOn !== "") {
    const conditions: string[] = [];
    const codes: number[] = [];
    for (const part of retries.retryOn.split(",").map((p) => p.trim()).filter((p) => p !== "")) {
      if (STATUS_CODE.test(part)) codes.push(Number(part));
      else conditions.push(part);
    }
    if (codes.length > 0 && !conditions.includes("retriable-status-codes")) {
      conditions.push("retriable-status-codes");
    }
    out.retry_on = conditions.join(",");
    out.retriable_status_codes = codes;
  }
  const perTry = durationOf(retries.perTryTimeout);
  if (perTry !== undefined) out.per_try_timeout = perTry;
  return out;
}

/**
 * The timeout fields of a RouteAction: `timeout` (`fallback` when unset, else 0s, i.e. none, as Istio) and,
 * when non-zero, `max_stream_duration` capped at it, which is what gRPC clients apply.
 */
export function timeoutFields(timeout: string | undefined, fallback?: DurationObject): EnvoyObject {
  const duration = durationOf(timeout) ?? fallback;
  if (duration === undefined || isZeroDuration(duration)) {
    return { timeout: ZERO_DURATION };
  }
  return {
    timeout: duration,
    max_stream_duration: { max_stream_duration: duration, grpc_timeout_header_max: duration },
  };
}

/** gRPC's hash key for "the same client always": one channel, the equivalent of a source IP. */
export const GRPC_CHANNEL_ID_KEY = "io.grpc.channel_id";

/** The route hash policy of a consistent-hash load balancer; undefined when it is not consistent hashing. */
export function hashPolicy(lb: LoadBalancerSettings | undefined): EnvoyObject[] | undefined {
  const hash = lb?.consistentHash;
  if (hash === undefined) return undefined;
  if (hash.httpHeaderName !== undefined && hash.httpHeaderName !== "") {
    return [{ header: { header_name: hash.httpHeaderName } }];
  }
  if (hash.httpCookie !== undefined) {
    const ttl = durationOf(hash.httpCookie.ttl);
    return [{
      cookie: {
        name: hash.httpCookie.name,
        ...(hash.httpCookie.path ? { path: hash.httpCookie.path } : {}),
        ...(ttl ? { ttl } : {}),
      },
    }];
  }
  if (hash.httpQueryParameterName !== undefined && hash.httpQueryParameterName !== "") {
    return [{ query_parameter: { name: hash.httpQueryParameterName } }];
  }
  if (hash.useSourceIp) return [{ filter_state: { key: GRPC_CHANNEL_ID_KEY } }];
  return undefined;
}

/**
 * A VirtualService percentage as Envoy's FractionalPercent, as Istio: `percentage` per million, the deprecated
 * integer `percent` per hundred, 100% when neither is set.
 */
export function fractionalPercent(percentage: Percent | undefined, percent?: number): EnvoyObject {
  if (percentage !== undefined) {
    return { numerator: Math.round((percentage.value ?? 0) * 10_000), denominator: "MILLION" };
  }
  return { numerator: percent ?? 100, denominator: "HUNDRED" };
}

/** The per-route HTTPFault config of a VirtualService fault; undefined without one. */
export function faultConfig(fault: HTTPFaultInjection | undefined): EnvoyObject | undefined {
  if (fault === undefined) return undefined;
  const out: EnvoyObject = { "@type": TYPE_URL.fault };
  const fixedDelay = durationOf(fault.delay?.fixedDelay);
  if (fault.delay !== undefined && fixedDelay !== undefined) {
    out.delay = {
      fixed_delay: fixedDelay,
      percentage: fractionalPercent(fault.delay.percentage, fault.delay.percent),
    };
  }
  if (fault.abort?.httpStatus !== undefined) {
    out.abort = {
      http_status: fault.abort.httpStatus,
      percentage: fractionalPercent(fault.abort.percentage),
    };
  }
  return out.delay === undefined && out.abort === undefined ? undefined : out;
}
