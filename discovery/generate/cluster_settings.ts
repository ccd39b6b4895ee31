/**
 * Connection pool and outlier detection settings of a DestinationRule as Envoy Cluster fields, as Istio
 * converts them. gRPC honours `circuit_breakers` `max_requests` (gRFC A32); it reads `outlier_detection` only
 * for success-rate and failure-percentage ejection (gRFC A50), which Istio's conversion leaves disabled.
 *
 * @module
 */
import type { ConnectionPoolSettings, OutlierDetection } from "@mesh/shared/config/networking/traffic_policy";
import { type DurationObject, durationOf, ZERO_DURATION } from "./envoy_duration.ts";
import type { EnvoyObject } from "./route_match.ts";

const UNLIMITED = 4_294_967_295;

/**
 * The circuit breaker thresholds: Istio's defaults (effectively unlimited, so a rolling update never trips
 * them before new endpoints arrive) overridden by the connection pool's limits.
 */
export function circuitBreakers(pool: ConnectionPoolSettings | undefined): EnvoyObject {
  const limit = (value: number | undefined) => ({
    value: value !== undefined && value > 0 ? value : UNLIMITED,
  });
  return {
    thresholds: [{
      max_connections: limit(pool?.tcp?.maxConnections),
      max_pending_requests: limit(pool?.http?.http1MaxPendingRequests),
      max_requests: limit(pool?.http?.http2MaxRequests),
      max_retries: limit(pool?.http?.maxRetries),
    }],
  };
}

/** Istio's default connect timeout (mesh `connectTimeout`). */
export const DEFAULT_CONNECT_TIMEOUT = "10s";

/** The cluster's connect timeout: the connection pool's, else the mesh default. */
export function connectTimeout(pool: ConnectionPoolSettings | undefined): DurationObject {
  return durationOf(pool?.tcp?.connectTimeout) ?? durationOf(DEFAULT_CONNECT_TIMEOUT) ?? ZERO_DURATION;
}

/**
 * Outlier detection fields (`outlier_detection`, and `common_lb_config.healthy_panic_threshold` from
 * `minHealthPercent`, 0 when unset); nothing when the rule sets none. Success-rate ejection is disabled, consecutive-error
 * ejection enforced at 100% when its threshold is above zero; the deprecated `consecutiveErrors` counts
 * gateway errors only.
 */
export function outlierDetectionFields(outlier: OutlierDetection | undefined): EnvoyObject {
  if (outlier === undefined) return {};
  const out: EnvoyObject = { enforcing_success_rate: { value: 0 } };
  const enforced = (threshold: number) => ({ value: threshold > 0 ? 100 : 0 });
  if (outlier.consecutiveErrors !== undefined && outlier.consecutiveErrors > 0) {
    out.consecutive_gateway_failure = { value: outlier.consecutiveErrors };
    out.enforcing_consecutive_gateway_failure = { value: 100 };
    out.enforcing_consecutive_5xx = { value: 0 };
  }
  if (outlier.consecutive5xxErrors !== undefined) {
    out.consecutive_5xx = { value: outlier.consecutive5xxErrors };
    out.enforcing_consecutive_5xx = enforced(outlier.consecutive5xxErrors);
  }
  if (outlier.consecutiveGatewayErrors !== undefined) {
    out.consecutive_gateway_failure = { value: outlier.consecutiveGatewayErrors };
    out.enforcing_consecutive_gateway_failure = enforced(outlier.consecutiveGatewayErrors);
  }
  const interval = durationOf(outlier.interval);
  if (interval !== undefined) out.interval = interval;
  const baseEjectionTime = durationOf(outlier.baseEjectionTime);
  if (baseEjectionTime !== undefined) out.base_ejection_time = baseEjectionTime;
  if (outlier.maxEjectionPercent !== undefined && outlier.maxEjectionPercent > 0) {
    out.max_ejection_percent = { value: outlier.maxEjectionPercent };
  }
  // Istio cannot tell an unset minHealthPercent from 0, so outlier detection always disables the panic mode
  // unless the rule asks for it.
  return {
    outlier_detection: out,
    common_lb_config: { healthy_panic_threshold: { value: outlier.minHealthPercent ?? 0 } },
  };
}
