import { childPath, type ValidationReport } from "../validation/report.ts";
import { arrayAt, integerAt, isObject, objectAt, stringAt } from "../validation/fields.ts";
import { durationAt, MS_DURATION } from "../validation/durations.ts";
import { isSet } from "../validation/values.ts";
import { type Destination, destinationAt } from "./destination.ts";
import { type Headers, headersAt } from "./header_operations.ts";
import { type HTTPRouteDestination, routeDestinationsAt } from "./route_destinations.ts";
import { httpMatchAt, type HTTPMatchRequest } from "./virtual_service_match.ts";
import {
  type CorsPolicy,
  corsPolicyAt,
  type Delegate,
  delegateAt,
  faultAt,
  type HTTPFaultInjection,
  type HTTPRedirect,
  type HTTPRetry,
  type HTTPRewrite,
  type Percent,
  percentAt,
  redirectAt,
  retriesAt,
  rewriteAt,
} from "./virtual_service_policies.ts";

/** Match conditions and actions for HTTP/1.1, HTTP/2 and gRPC traffic. */
export interface HTTPRoute {
  /** Name of the route, for access logs and debugging. */
  readonly name?: string;
  /** Conditions, any one of which selects the route; none matches every request. */
  readonly match?: readonly HTTPMatchRequest[];
  /** Where requests go, with weights; excludes `redirect` and `delegate`. */
  readonly route?: readonly HTTPRouteDestination[];
  /** Answer with a redirect instead of forwarding; excludes `route`, `fault`, `rewrite` and `delegate`. */
  readonly redirect?: HTTPRedirect;
  /** Hands the route over to a delegate virtual service (root virtual services bound to gateways only). */
  readonly delegate?: Delegate;
  /** Path and authority rewrite before forwarding; excludes `redirect`. */
  readonly rewrite?: HTTPRewrite;
  /** Request timeout, at least 1ms. */
  readonly timeout?: string;
  /** Retry policy. */
  readonly retries?: HTTPRetry;
  /** Faults injected into matching requests. */
  readonly fault?: HTTPFaultInjection;
  /** Where a copy of each request is sent, fire and forget. */
  readonly mirror?: Destination;
  /** Deprecated: integer mirror percentage; use mirrorPercentage. */
  readonly mirrorPercent?: number;
  /** Share of requests mirrored; 100% when `mirror` is set and this is not. */
  readonly mirrorPercentage?: Percent;
  /** Cross-origin resource sharing policy. */
  readonly corsPolicy?: CorsPolicy;
  /** Header changes on requests and responses. */
  readonly headers?: Headers;
}

const HTTP_ROUTE_FIELDS = [
  "name",
  "match",
  "route",
  "redirect",
  "delegate",
  "rewrite",
  "timeout",
  "retries",
  "fault",
  "mirror",
  "mirrorPercent",
  "mirrorPercentage",
  "corsPolicy",
  "headers",
];

/** Where an HTTP route sits: in a delegate virtual service, or in one that may delegate (bound to gateways). */
export interface HttpRouteContext {
  /** The virtual service has no hosts: it is a delegate and its routes may not delegate again. */
  readonly inDelegate: boolean;
  /** The virtual service is bound to at least one gateway other than `mesh` (delegation is allowed). */
  readonly appliesToGateway: boolean;
}

/** Validates one HTTP route at `path` (`spec.http[i]`). */
export function httpRouteAt(
  report: ValidationReport,
  path: string,
  value: unknown,
  ctx: HttpRouteContext,
): void {
  const obj = objectAt(report, path, value, HTTP_ROUTE_FIELDS);
  if (obj === undefined) return;
  stringAt(report, childPath(path, "name"), obj.name);
  const hasRoute = arrayAt(report, childPath(path, "route"), obj.route).length > 0;
  const hasRedirect = isSet(obj.redirect);

  if (isSet(obj.delegate)) {
    const at = childPath(path, "delegate");
    if (ctx.inDelegate) report.error(at, "a delegate virtual service cannot delegate again");
    else if (!ctx.appliesToGateway) {
      report.error(at, "http delegate only applies to virtual services bound to a gateway");
    }
    if (hasRoute) report.error(childPath(path, "route"), "a root HTTP route with delegate cannot have route");
    if (hasRedirect) {
      report.error(childPath(path, "redirect"), "a root HTTP route with delegate cannot have redirect");
    }
    delegateAt(report, at, obj.delegate);
  } else if (hasRedirect) {
    if (hasRoute) report.error(path, "HTTP route cannot contain both route and redirect");
    if (isSet(obj.fault)) report.error(path, "HTTP route cannot contain both fault and redirect");
    if (isSet(obj.rewrite)) report.error(path, "HTTP route cannot contain both rewrite and redirect");
  } else if (!hasRoute) {
    report.error(path, "HTTP route needs route, redirect or delegate");
  }

  const matchPath = childPath(path, "match");
  for (const [i, match] of arrayAt(report, matchPath, obj.match).entries()) {
    httpMatchAt(report, childPath(matchPath, i), match, ctx.inDelegate);
  }
  routeDestinationsAt(report, childPath(path, "route"), obj.route, true);
  redirectAt(report, childPath(path, "redirect"), obj.redirect);
  rewriteAt(report, childPath(path, "rewrite"), obj.rewrite);
  durationAt(report, childPath(path, "timeout"), obj.timeout, MS_DURATION);
  retriesAt(report, childPath(path, "retries"), obj.retries);
  faultAt(report, childPath(path, "fault"), obj.fault);
  corsPolicyAt(report, childPath(path, "corsPolicy"), obj.corsPolicy);
  headersAt(report, childPath(path, "headers"), obj.headers);
  if (isSet(obj.mirror)) destinationAt(report, childPath(path, "mirror"), obj.mirror);
  const mirrorPercent = integerAt(report, childPath(path, "mirrorPercent"), obj.mirrorPercent);
  if (mirrorPercent !== undefined) {
    if (mirrorPercent < 0 || mirrorPercent > 100) {
      report.error(
        childPath(path, "mirrorPercent"),
        `mirrorPercent must be between 0 and 100, got ${mirrorPercent}`,
      );
    }
    report.warn(childPath(path, "mirrorPercent"), "mirrorPercent is deprecated; use mirrorPercentage");
  }
  percentAt(report, childPath(path, "mirrorPercentage"), obj.mirrorPercentage);
  if ((isSet(obj.mirrorPercent) || isSet(obj.mirrorPercentage)) && !isSet(obj.mirror)) {
    report.warn(path, "a mirror percentage without mirror has no effect");
  }
}

/** Warns about HTTP routes that can never match because an earlier route without conditions catches all. */
export function warnUnreachableRoutes(
  report: ValidationReport,
  path: string,
  routes: readonly unknown[],
): void {
  const catchAll = routes.findIndex((r) => {
    const match = isObject(r) ? r.match : undefined;
    return !Array.isArray(match) || match.length === 0;
  });
  if (catchAll >= 0 && catchAll < routes.length - 1) {
    report.warn(
      childPath(path, catchAll),
      `this route has no match conditions and catches all requests: routes after index ${catchAll} are never used`,
    );
  }
}
