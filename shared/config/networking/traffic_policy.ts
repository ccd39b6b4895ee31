import { childPath, type ValidationReport } from "../validation/report.ts";
import { arrayAt, booleanAt, objectAt, stringAt } from "../validation/fields.ts";
import { durationAt, MS_DURATION } from "../validation/durations.ts";
import { checkHeaderMatchName } from "../validation/headers.ts";
import { enumAt, integerInRangeAt, isSet, optionalObjectAt } from "../validation/values.ts";
import { type PortSelector, portSelectorAt } from "./destination.ts";
import { localityLbAt, type LocalityLoadBalancerSetting } from "./locality_lb.ts";
import { clientTlsAt, type ClientTLSSettings } from "./tls_settings.ts";

/** Load balancing: a simple algorithm or consistent hashing, plus locality weighting. */
export interface LoadBalancerSettings {
  /** A standard algorithm; excludes `consistentHash`. */
  readonly simple?: "ROUND_ROBIN" | "LEAST_CONN" | "RANDOM" | "PASSTHROUGH";
  /**
   * Session affinity: hash on exactly one of a header, a cookie (created with `ttl` when absent), the source
   * IP or a query parameter.
   */
  readonly consistentHash?: {
    readonly httpHeaderName?: string;
    readonly httpCookie?: { readonly name: string; readonly path?: string; readonly ttl: string };
    readonly useSourceIp?: boolean;
    readonly httpQueryParameterName?: string;
    readonly minimumRingSize?: number;
  };
  /** Locality-weighted load balancing; overrides the mesh-wide setting. */
  readonly localityLbSetting?: LocalityLoadBalancerSetting;
}

/** Connection pool limits for TCP and HTTP. */
export interface ConnectionPoolSettings {
  /** TCP limits: connections, connect timeout (duration text) and keepalive. */
  readonly tcp?: {
    readonly maxConnections?: number;
    readonly connectTimeout?: string;
    readonly tcpKeepalive?: { readonly probes?: number; readonly time?: string; readonly interval?: string };
  };
  /** HTTP limits: pending and active requests, per-connection requests, retries, idle timeout. */
  readonly http?: {
    readonly http1MaxPendingRequests?: number;
    readonly http2MaxRequests?: number;
    readonly maxRequestsPerConnection?: number;
    readonly maxRetries?: number;
    readonly idleTimeout?: string;
    readonly h2UpgradePolicy?: "DEFAULT" | "DO_NOT_UPGRADE" | "UPGRADE";
    readonly useClientProtocol?: boolean;
  };
}

/** Ejection of unhealthy hosts from the load balancing pool. */
export interface OutlierDetection {
  /** Deprecated: use consecutiveGatewayErrors or consecutive5xxErrors. */
  readonly consecutiveErrors?: number;
  /** Gateway errors (502, 503, 504) in a row that eject a host; 0 disables the check. */
  readonly consecutiveGatewayErrors?: number;
  /** 5xx responses in a row that eject a host; 0 disables the check. */
  readonly consecutive5xxErrors?: number;
  /** Time between ejection sweeps, as duration text such as `10s`; at least 1 ms. */
  readonly interval?: string;
  /** Minimum ejection time, as duration text, multiplied by the times the host was ejected; at least 1 ms. */
  readonly baseEjectionTime?: string;
  /** Most hosts that may be ejected, as a percentage from 0 to 100. */
  readonly maxEjectionPercent?: number;
  /** Outlier detection is off while fewer hosts than this percentage (0 to 100) are healthy. */
  readonly minHealthPercent?: number;
}

/** Policies applied to a port of the destination, overriding the destination-wide ones. */
export interface PortTrafficPolicy {
  /** The port these settings apply to. */
  readonly port: PortSelector;
  /** Load balancing for this port. */
  readonly loadBalancer?: LoadBalancerSettings;
  /** Connection pool limits for this port. */
  readonly connectionPool?: ConnectionPoolSettings;
  /** Outlier detection for this port. */
  readonly outlierDetection?: OutlierDetection;
  /** TLS to the upstream on this port. */
  readonly tls?: ClientTLSSettings;
}

/** Traffic policies for a destination or subset. */
export interface TrafficPolicy {
  /** How requests are spread over the destination's hosts. */
  readonly loadBalancer?: LoadBalancerSettings;
  /** Limits on connections and requests to each host. */
  readonly connectionPool?: ConnectionPoolSettings;
  /** When unhealthy hosts are ejected from the pool. */
  readonly outlierDetection?: OutlierDetection;
  /** TLS to the upstream. */
  readonly tls?: ClientTLSSettings;
  /** Per-port overrides: the settings for a port replace all four parts above for it, not merge with them. */
  readonly portLevelSettings?: readonly PortTrafficPolicy[];
}

const POLICY_FIELDS = ["loadBalancer", "connectionPool", "outlierDetection", "tls"];
const MAX_INT32 = 2 ** 31 - 1;

function loadBalancerAt(report: ValidationReport, path: string, value: unknown): void {
  const obj = optionalObjectAt(report, path, value, ["simple", "consistentHash", "localityLbSetting"]);
  if (obj === undefined) return;
  if (isSet(obj.simple) && isSet(obj.consistentHash)) {
    report.error(path, "only one of simple, consistentHash may be set");
  }
  enumAt(report, childPath(path, "simple"), obj.simple, [
    "ROUND_ROBIN",
    "LEAST_CONN",
    "RANDOM",
    "PASSTHROUGH",
  ]);
  const hashPath = childPath(path, "consistentHash");
  const hashKeys = ["httpHeaderName", "httpCookie", "useSourceIp", "httpQueryParameterName"];
  const hash = optionalObjectAt(report, hashPath, obj.consistentHash, [...hashKeys, "minimumRingSize"]);
  if (hash) {
    const keys = hashKeys.filter((k) => isSet(hash[k]));
    if (keys.length !== 1) {
      report.error(hashPath, `exactly one of ${hashKeys.join(", ")} must be set, got ${keys.length}`);
    }
    const header = stringAt(report, childPath(hashPath, "httpHeaderName"), hash.httpHeaderName);
    if (header !== undefined) {
      const problem = checkHeaderMatchName(header);
      if (problem) report.error(childPath(hashPath, "httpHeaderName"), problem);
    }
    booleanAt(report, childPath(hashPath, "useSourceIp"), hash.useSourceIp);
    if (stringAt(report, childPath(hashPath, "httpQueryParameterName"), hash.httpQueryParameterName) === "") {
      report.error(childPath(hashPath, "httpQueryParameterName"), "query parameter name cannot be empty");
    }
    integerInRangeAt(report, childPath(hashPath, "minimumRingSize"), hash.minimumRingSize, 0);
    const cookiePath = childPath(hashPath, "httpCookie");
    const cookie = optionalObjectAt(report, cookiePath, hash.httpCookie, ["name", "path", "ttl"]);
    if (cookie) {
      if (!stringAt(report, childPath(cookiePath, "name"), cookie.name)) {
        report.error(childPath(cookiePath, "name"), "name required for httpCookie");
      }
      stringAt(report, childPath(cookiePath, "path"), cookie.path);
      if (!isSet(cookie.ttl)) report.error(childPath(cookiePath, "ttl"), "ttl required for httpCookie");
      durationAt(report, childPath(cookiePath, "ttl"), cookie.ttl, { min: 0n });
    }
  }
  localityLbAt(report, childPath(path, "localityLbSetting"), obj.localityLbSetting);
}

function connectionPoolAt(report: ValidationReport, path: string, value: unknown): void {
  const obj = optionalObjectAt(report, path, value, ["tcp", "http"]);
  if (obj === undefined) return;
  if (!isSet(obj.tcp) && !isSet(obj.http)) {
    report.error(path, "connection pool must have at least one of tcp, http");
  }
  const tcpPath = childPath(path, "tcp");
  const tcp = optionalObjectAt(report, tcpPath, obj.tcp, [
    "maxConnections",
    "connectTimeout",
    "tcpKeepalive",
  ]);
  if (tcp) {
    integerInRangeAt(report, childPath(tcpPath, "maxConnections"), tcp.maxConnections, 0, MAX_INT32);
    durationAt(report, childPath(tcpPath, "connectTimeout"), tcp.connectTimeout, MS_DURATION);
    const kaPath = childPath(tcpPath, "tcpKeepalive");
    const ka = optionalObjectAt(report, kaPath, tcp.tcpKeepalive, ["probes", "time", "interval"]);
    if (ka) {
      // A uint32 in Istio's API, as Envoy's keepalive_probes.
      integerInRangeAt(report, childPath(kaPath, "probes"), ka.probes, 0, 2 ** 32 - 1);
      durationAt(report, childPath(kaPath, "time"), ka.time, MS_DURATION);
      durationAt(report, childPath(kaPath, "interval"), ka.interval, MS_DURATION);
    }
  }
  const httpPath = childPath(path, "http");
  const httpFields = [
    "http1MaxPendingRequests",
    "http2MaxRequests",
    "maxRequestsPerConnection",
    "maxRetries",
  ];
  const http = optionalObjectAt(report, httpPath, obj.http, [
    ...httpFields,
    "idleTimeout",
    "h2UpgradePolicy",
    "useClientProtocol",
  ]);
  if (http) {
    for (const f of httpFields) integerInRangeAt(report, childPath(httpPath, f), http[f], 0, MAX_INT32);
    durationAt(report, childPath(httpPath, "idleTimeout"), http.idleTimeout, MS_DURATION);
    enumAt(report, childPath(httpPath, "h2UpgradePolicy"), http.h2UpgradePolicy, [
      "DEFAULT",
      "DO_NOT_UPGRADE",
      "UPGRADE",
    ]);
    booleanAt(report, childPath(httpPath, "useClientProtocol"), http.useClientProtocol);
  }
}

function outlierDetectionAt(report: ValidationReport, path: string, value: unknown): void {
  const obj = optionalObjectAt(report, path, value, [
    "consecutiveErrors",
    "consecutiveGatewayErrors",
    "consecutive5xxErrors",
    "interval",
    "baseEjectionTime",
    "maxEjectionPercent",
    "minHealthPercent",
  ]);
  if (obj === undefined) return;
  if (
    integerInRangeAt(report, childPath(path, "consecutiveErrors"), obj.consecutiveErrors, 0, MAX_INT32) !==
      undefined
  ) {
    report.warn(
      childPath(path, "consecutiveErrors"),
      "consecutiveErrors is deprecated; use consecutiveGatewayErrors or consecutive5xxErrors",
    );
  }
  integerInRangeAt(
    report,
    childPath(path, "consecutiveGatewayErrors"),
    obj.consecutiveGatewayErrors,
    0,
    2 ** 32 - 1,
  );
  integerInRangeAt(report, childPath(path, "consecutive5xxErrors"), obj.consecutive5xxErrors, 0, 2 ** 32 - 1);
  durationAt(report, childPath(path, "interval"), obj.interval, MS_DURATION);
  durationAt(report, childPath(path, "baseEjectionTime"), obj.baseEjectionTime, MS_DURATION);
  integerInRangeAt(report, childPath(path, "maxEjectionPercent"), obj.maxEjectionPercent, 0, 100);
  integerInRangeAt(report, childPath(path, "minHealthPercent"), obj.minHealthPercent, 0, 100);
}

function policyFieldsAt(report: ValidationReport, path: string, obj: Record<string, unknown>): void {
  loadBalancerAt(report, childPath(path, "loadBalancer"), obj.loadBalancer);
  connectionPoolAt(report, childPath(path, "connectionPool"), obj.connectionPool);
  outlierDetectionAt(report, childPath(path, "outlierDetection"), obj.outlierDetection);
  if (isSet(obj.tls)) clientTlsAt(report, childPath(path, "tls"), obj.tls);
}

/** Validates a traffic policy: at least one field set; port-level settings each name a port. */
export function trafficPolicyAt(report: ValidationReport, path: string, value: unknown): void {
  if (!isSet(value)) return;
  const obj = objectAt(report, path, value, [...POLICY_FIELDS, "portLevelSettings"]);
  if (obj === undefined) return;
  if (![...POLICY_FIELDS, "portLevelSettings"].some((f) => isSet(obj[f]))) {
    report.error(path, "traffic policy must have at least one field");
  }
  policyFieldsAt(report, path, obj);
  const plPath = childPath(path, "portLevelSettings");
  const ports = new Set<number>();
  for (const [i, raw] of arrayAt(report, plPath, obj.portLevelSettings).entries()) {
    const at = childPath(plPath, i);
    const item = objectAt(report, at, raw, ["port", ...POLICY_FIELDS]);
    if (item === undefined) continue;
    if (!isSet(item.port)) report.error(childPath(at, "port"), "a port traffic policy must name a port");
    else {
      const number = portSelectorAt(report, childPath(at, "port"), item.port)?.number;
      if (typeof number === "number" && ports.has(number)) {
        report.warn(
          childPath(at, "port"),
          `port ${number} already has settings earlier in the list; these are ignored`,
        );
      }
      if (typeof number === "number") ports.add(number);
    }
    if (!POLICY_FIELDS.some((f) => isSet(item[f]))) {
      report.error(at, "port traffic policy must have at least one field");
    }
    policyFieldsAt(report, at, item);
  }
}
