import { childPath, type ValidationReport } from "../validation/report.ts";
import { arrayAt, booleanAt, integerAt, objectAt, stringAt } from "../validation/fields.ts";
import { checkHeaderMatchName } from "../validation/headers.ts";
import { durationAt, MS_DURATION, SECOND } from "../validation/durations.ts";
import { isDnsSubdomain, isLowercaseDnsLabel } from "../validation/labels.ts";
import { isSet, numberAt, optionalObjectAt, stringListAt } from "../validation/values.ts";
import { type StringMatch, stringMatchAt, stringMatchValue } from "./string_match.ts";

/** A percentage 0.0..100.0 as a double. */
export interface Percent {
  /** The percentage: 0.0, or from 0.0001 to 100.0. */
  readonly value?: number;
}

/** Cross-origin resource sharing policy of a route. */
export interface CorsPolicy {
  /** Deprecated: exact origins; use allowOrigins. */
  readonly allowOrigin?: readonly string[];
  /** Origins allowed, as string matches; any one allows the request. */
  readonly allowOrigins?: readonly StringMatch[];
  /** Methods allowed, for `Access-Control-Allow-Methods`. */
  readonly allowMethods?: readonly string[];
  /** Headers allowed, for `Access-Control-Allow-Headers`. */
  readonly allowHeaders?: readonly string[];
  /** Headers the browser may read, for `Access-Control-Expose-Headers`. */
  readonly exposeHeaders?: readonly string[];
  /** How long preflight results may be cached, as duration text in whole seconds. */
  readonly maxAge?: string;
  /** Whether credentialed requests are allowed, for `Access-Control-Allow-Credentials`. */
  readonly allowCredentials?: boolean;
}

/** Faults injected into requests: a delay, an abort, or both. */
export interface HTTPFaultInjection {
  /**
   * Delay before forwarding: one of `fixedDelay` (duration text, at least 1 ms) or `exponentialDelay`, for a
   * percentage of requests.
   */
  readonly delay?: {
    readonly fixedDelay?: string;
    readonly exponentialDelay?: string;
    readonly percentage?: Percent;
    /** Deprecated: integer percentage; use percentage. */
    readonly percent?: number;
  };
  /**
   * Abort with an HTTP status (200 to 599) instead of forwarding, for a percentage of requests; gRPC and
   * HTTP/2 aborts are rejected as unsupported.
   */
  readonly abort?: {
    readonly httpStatus?: number;
    readonly grpcStatus?: string;
    readonly http2Error?: string;
    readonly percentage?: Percent;
  };
}

/** Retry policy of a route. */
export interface HTTPRetry {
  /** Retries allowed per request; 0 disables retries and forbids the other fields. */
  readonly attempts?: number;
  /** Timeout of each try, as duration text; at least 1 ms. */
  readonly perTryTimeout?: string;
  /** Comma-separated retry conditions (`5xx`, `connect-failure`, …) or HTTP status codes. */
  readonly retryOn?: string;
  /** Whether retries may go to hosts in other localities. */
  readonly retryRemoteLocalities?: boolean;
}

/** A redirect response instead of forwarding. */
export interface HTTPRedirect {
  /** Path that replaces the request's in the redirect. */
  readonly uri?: string;
  /** Authority that replaces the request's in the redirect. */
  readonly authority?: string;
  /** Status of the redirect response, a 3xx code (default 301). */
  readonly redirectCode?: number;
}

/** A rewrite of path and/or authority before forwarding. */
export interface HTTPRewrite {
  /** Replaces the matched path prefix, or the whole path when matched exactly. */
  readonly uri?: string;
  /** Replaces the `Host`/`:authority` header. */
  readonly authority?: string;
}

const HTTP_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "CONNECT", "OPTIONS", "TRACE"];
const RETRY_ON = [
  "5xx",
  "gateway-error",
  "reset",
  "connect-failure",
  "retriable-4xx",
  "refused-stream",
  "retriable-status-codes",
  "cancelled",
  "deadline-exceeded",
  "internal",
  "resource-exhausted",
  "unavailable",
];
// HTTP status codes with a standard reason phrase, the ones a retryOn entry may name.
const KNOWN_STATUS = new Set([
  ...[100, 101, 102, 103, 200, 201, 202, 203, 204, 205, 206, 207, 208, 226],
  ...[300, 301, 302, 303, 304, 305, 307, 308],
  ...Array.from({ length: 19 }, (_, i) => 400 + i),
  ...[421, 422, 423, 424, 425, 426, 428, 429, 431, 451],
  ...[500, 501, 502, 503, 504, 505, 506, 507, 508, 510, 511],
]);

/** Validates a Percent: 0, or 0.0001..100. */
export function percentAt(report: ValidationReport, path: string, value: unknown): void {
  const obj = optionalObjectAt(report, path, value, ["value"]);
  if (obj === undefined) return;
  const v = numberAt(report, childPath(path, "value"), obj.value);
  if (v !== undefined && (v < 0 || v > 100 || (v > 0 && v < 0.0001))) {
    report.error(childPath(path, "value"), `percentage ${v} is neither 0.0 nor in range [0.0001, 100.0]`);
  }
}

/** Validates a CORS policy. */
export function corsPolicyAt(report: ValidationReport, path: string, value: unknown): void {
  const obj = optionalObjectAt(report, path, value, [
    "allowOrigin",
    "allowOrigins",
    "allowMethods",
    "allowHeaders",
    "exposeHeaders",
    "maxAge",
    "allowCredentials",
  ]);
  if (obj === undefined) return;
  if (stringListAt(report, childPath(path, "allowOrigin"), obj.allowOrigin).length > 0) {
    report.warn(
      childPath(path, "allowOrigin"),
      "allowOrigin is deprecated; use allowOrigins with exact matches",
    );
  }
  const originsPath = childPath(path, "allowOrigins");
  for (const [i, raw] of arrayAt(report, originsPath, obj.allowOrigins).entries()) {
    const match = stringMatchAt(report, childPath(originsPath, i), raw);
    if (match && stringMatchValue(match) === "") {
      report.error(childPath(originsPath, i), "an allowed origin needs a non-empty exact, prefix or regex");
    }
  }
  stringListAt(
    report,
    childPath(path, "allowMethods"),
    obj.allowMethods,
    (m) =>
      HTTP_METHODS.includes(m)
        ? undefined
        : `"${m}" is not a supported HTTP method; expected one of ${HTTP_METHODS.join(", ")}`,
  );
  stringListAt(report, childPath(path, "allowHeaders"), obj.allowHeaders, checkHeaderMatchName);
  stringListAt(report, childPath(path, "exposeHeaders"), obj.exposeHeaders, checkHeaderMatchName);
  durationAt(report, childPath(path, "maxAge"), obj.maxAge, { min: MS_DURATION.min, precision: SECOND });
  booleanAt(report, childPath(path, "allowCredentials"), obj.allowCredentials);
}

/** Validates fault injection: at least one of delay and abort. */
export function faultAt(report: ValidationReport, path: string, value: unknown): void {
  const obj = optionalObjectAt(report, path, value, ["delay", "abort"]);
  if (obj === undefined) return;
  if (!isSet(obj.delay) && !isSet(obj.abort)) {
    report.error(path, "fault injection must have an abort and/or a delay");
  }
  const delayPath = childPath(path, "delay");
  const delay = optionalObjectAt(report, delayPath, obj.delay, [
    "fixedDelay",
    "exponentialDelay",
    "percentage",
    "percent",
  ]);
  if (delay) {
    percentAt(report, childPath(delayPath, "percentage"), delay.percentage);
    const percent = integerAt(report, childPath(delayPath, "percent"), delay.percent);
    if (percent !== undefined) {
      if (percent < 0 || percent > 100) {
        report.error(childPath(delayPath, "percent"), `percentage ${percent} is not in range 0..100`);
      }
      report.warn(childPath(delayPath, "percent"), "percent is deprecated; use percentage");
    }
    if (isSet(delay.fixedDelay) && isSet(delay.exponentialDelay)) {
      report.error(delayPath, "only one of fixedDelay, exponentialDelay may be set");
    }
    durationAt(report, childPath(delayPath, "fixedDelay"), delay.fixedDelay, MS_DURATION);
    if (isSet(delay.exponentialDelay)) {
      durationAt(report, childPath(delayPath, "exponentialDelay"), delay.exponentialDelay, MS_DURATION);
      report.error(
        childPath(delayPath, "exponentialDelay"),
        "exponentialDelay is not supported yet; use fixedDelay",
      );
    } else if (!isSet(delay.fixedDelay)) {
      report.error(childPath(delayPath, "fixedDelay"), "a delay needs fixedDelay");
    }
  }
  const abortPath = childPath(path, "abort");
  const abort = optionalObjectAt(report, abortPath, obj.abort, [
    "httpStatus",
    "grpcStatus",
    "http2Error",
    "percentage",
  ]);
  if (abort) {
    percentAt(report, childPath(abortPath, "percentage"), abort.percentage);
    const kinds = (["httpStatus", "grpcStatus", "http2Error"] as const).filter((k) => isSet(abort[k]));
    if (kinds.length > 1) report.error(abortPath, `only one of ${kinds.join(", ")} may be set`);
    if (kinds.length === 0) report.error(childPath(abortPath, "httpStatus"), "an abort needs httpStatus");
    const status = integerAt(report, childPath(abortPath, "httpStatus"), abort.httpStatus);
    if (status !== undefined && (status < 200 || status > 599)) {
      report.error(childPath(abortPath, "httpStatus"), `HTTP status ${status} is not in range 200..599`);
    }
    for (const k of ["grpcStatus", "http2Error"] as const) {
      if (isSet(abort[k])) {
        stringAt(report, childPath(abortPath, k), abort[k]);
        report.error(
          childPath(abortPath, k),
          `${k} abort fault injection is not supported yet; use httpStatus`,
        );
      }
    }
  }
}

/** Validates a retry policy. */
export function retriesAt(report: ValidationReport, path: string, value: unknown): void {
  const obj = optionalObjectAt(report, path, value, [
    "attempts",
    "perTryTimeout",
    "retryOn",
    "retryRemoteLocalities",
  ]);
  if (obj === undefined) return;
  const attempts = integerAt(report, childPath(path, "attempts"), obj.attempts) ?? 0;
  if (attempts < 0) report.error(childPath(path, "attempts"), `attempts cannot be negative, got ${attempts}`);
  // An int32 in Istio's API, whose decoding refuses more; Envoy's num_retries (a uint32) could not carry it.
  if (attempts > 2 ** 31 - 1) {
    report.error(childPath(path, "attempts"), `attempts must be at most 2147483647, got ${attempts}`);
  }
  if (
    attempts === 0 && (isSet(obj.perTryTimeout) || isSet(obj.retryOn) || isSet(obj.retryRemoteLocalities))
  ) {
    report.error(
      childPath(path, "attempts"),
      "retry policy configured while attempts is 0 (retries disabled)",
    );
  }
  durationAt(report, childPath(path, "perTryTimeout"), obj.perTryTimeout, MS_DURATION);
  const retryOn = stringAt(report, childPath(path, "retryOn"), obj.retryOn);
  if (retryOn) {
    for (const policy of retryOn.split(",")) {
      const known = RETRY_ON.includes(policy) ||
        (/^[0-9]+$/.test(policy) && KNOWN_STATUS.has(Number(policy)));
      if (!known) {
        report.error(
          childPath(path, "retryOn"),
          `"${policy}" is not a valid retryOn policy; expected an HTTP status code or one of ${
            RETRY_ON.join(", ")
          }`,
        );
      }
    }
  }
  booleanAt(report, childPath(path, "retryRemoteLocalities"), obj.retryRemoteLocalities);
}

/** Validates a redirect: URI and/or authority, a 3xx code when given. */
export function redirectAt(report: ValidationReport, path: string, value: unknown): void {
  const obj = optionalObjectAt(report, path, value, ["uri", "authority", "redirectCode"]);
  if (obj === undefined) return;
  const uri = stringAt(report, childPath(path, "uri"), obj.uri);
  const authority = stringAt(report, childPath(path, "authority"), obj.authority);
  if (!uri && !authority) report.error(path, "redirect must specify uri, authority, or both");
  const code = integerAt(report, childPath(path, "redirectCode"), obj.redirectCode);
  if (code !== undefined && code !== 0 && (code < 300 || code > 399)) {
    report.error(childPath(path, "redirectCode"), `${code} is not a valid redirect code; must be 3xx`);
  }
}

/** Validates a rewrite: URI and/or authority. */
export function rewriteAt(report: ValidationReport, path: string, value: unknown): void {
  const obj = optionalObjectAt(report, path, value, ["uri", "authority"]);
  if (obj === undefined) return;
  const uri = stringAt(report, childPath(path, "uri"), obj.uri);
  const authority = stringAt(report, childPath(path, "authority"), obj.authority);
  if (!uri && !authority) report.error(path, "rewrite must specify uri, authority, or both");
}

/** A reference from a root route to the delegate virtual service that holds its routes. */
export interface Delegate {
  /** Name of the delegate virtual service. */
  readonly name: string;
  /** Defaults to the root virtual service's namespace. */
  readonly namespace?: string;
}

/** Validates a delegate reference `{ name, namespace }` of a root route. */
export function delegateAt(report: ValidationReport, path: string, value: unknown): void {
  const obj = objectAt(report, path, value, ["name", "namespace"]);
  if (obj === undefined) return;
  const name = stringAt(report, childPath(path, "name"), obj.name);
  if (!name) report.error(childPath(path, "name"), "delegate name is required");
  else if (!isDnsSubdomain(name)) {
    report.error(
      childPath(path, "name"),
      `invalid delegate name "${name}"; expected a resource name such as "reviews-routes"`,
    );
  }
  const namespace = stringAt(report, childPath(path, "namespace"), obj.namespace);
  if (namespace && !isLowercaseDnsLabel(namespace)) {
    report.error(
      childPath(path, "namespace"),
      `invalid delegate namespace "${namespace}"; expected a namespace name`,
    );
  }
}
