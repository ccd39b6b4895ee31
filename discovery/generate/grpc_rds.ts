/**
 * RDS for proxyless gRPC: the RouteConfiguration of each listener the client watches, with one virtual host
 * for the service, routes from the VirtualService that claims it (path and header matches, weighted subsets,
 * timeouts, retries, consistent hashing, faults), or a default route to the service's cluster.
 *
 * @module
 */
import type { VirtualServiceSpec } from "@mesh/shared/config/networking/virtual_service";
import { TYPE_URL } from "@mesh/proto/type_urls";
import type { Proxy } from "../model/proxy.ts";
import type { PushContext } from "../push/push_context.ts";
import { GRPC_RDS_UNAFFECTED } from "./grpc_unaffected_kinds.ts";
import { grpcProxyShape } from "./grpc_shape.ts";
import {
  cacheKey,
  type GeneratedResource,
  type GenerateRequest,
  stepwise,
  type XdsGenerator,
} from "./generator.ts";
import { stableJson } from "./fingerprint.ts";
import { grpcTargets } from "./grpc_target.ts";
import {
  clusterSpecifier,
  FAULT_FILTER_NAME,
  faultConfig,
  retryPolicy,
  timeoutFields,
} from "./route_action.ts";
import { type EnvoyObject, routeMatch } from "./route_match.ts";
import type { DurationObject } from "./envoy_duration.ts";
import { corsPolicy, headerFields, mirrorPolicies, redirectAction } from "./route_extras.ts";
import { type PlannedRoute, planRouteConfiguration, type RoutePlan } from "./route_plan.ts";

/**
 * The Envoy route of one planned route; `spec` is the VirtualService the plan's indices point into.
 * `defaultTimeout` (`MESH_DEFAULT_REQUEST_TIMEOUT`) is the timeout of a VirtualService route that sets none;
 * routes without a VirtualService keep no timeout, as the reference's default routes do.
 */
export function envoyRoute(
  planned: PlannedRoute,
  spec: VirtualServiceSpec | undefined,
  defaultTimeout?: DurationObject,
): EnvoyObject {
  const http = planned.http >= 0 ? spec?.http?.[planned.http] : undefined;
  if (planned.http >= 0 && http === undefined) {
    throw new RangeError(
      `Route plan names HTTP route ${planned.http}, which the VirtualService does not have`,
    );
  }
  const match = http !== undefined && planned.match >= 0 ? http.match?.[planned.match] : undefined;
  const name = [http?.name, match?.name].filter((n) => n !== undefined && n !== "").join(".");
  const common = {
    ...(name !== "" ? { name } : {}),
    match: routeMatch(match),
    ...headerFields(http?.headers),
  };
  if (http?.redirect !== undefined) return { ...common, redirect: redirectAction(http.redirect) };
  const retry = retryPolicy(http?.retries);
  const action: EnvoyObject = {
    ...clusterSpecifier(planned.clusters),
    ...timeoutFields(http?.timeout, http !== undefined ? defaultTimeout : undefined),
    ...(retry ? { retry_policy: retry } : {}),
    ...(planned.hashPolicy ? { hash_policy: planned.hashPolicy } : {}),
    ...(http?.rewrite?.uri ? { prefix_rewrite: http.rewrite.uri } : {}),
    ...(http?.rewrite?.authority ? { host_rewrite_literal: http.rewrite.authority } : {}),
    ...(planned.mirrorCluster
      ? {
        request_mirror_policies: mirrorPolicies(
          planned.mirrorCluster,
          http?.mirrorPercentage,
          http?.mirrorPercent,
        ),
      }
      : {}),
    ...(http?.corsPolicy ? { cors: corsPolicy(http.corsPolicy) } : {}),
  };
  const fault = faultConfig(http?.fault);
  return {
    ...common,
    route: action,
    ...(fault ? { typed_per_filter_config: { [FAULT_FILTER_NAME]: fault } } : {}),
  };
}

/** The RouteConfiguration of a plan: one virtual host with the planned routes in order. */
export function routeConfiguration(plan: RoutePlan, spec: VirtualServiceSpec | undefined): EnvoyObject {
  return {
    name: plan.name,
    virtual_hosts: [{
      name: plan.virtualHost,
      domains: [...plan.domains],
      routes: plan.routes.map((route) => envoyRoute(route, spec)),
    }],
  };
}

/**
 * Builds the route configurations a proxyless gRPC client watches. Reads the proxy's service scope, the
 * VirtualServices it imports for the mesh, DestinationRules of single destinations (for hashing), and the
 * proxy's namespace and labels (for match conditions with source constraints) — all resolved into the plan,
 * which with the VirtualService's fingerprint is the cache key.
 */
export const grpcRdsGenerator: XdsGenerator<PushContext> = {
  typeUrl: TYPE_URL.route,
  shapeOf: (proxy: Proxy, push: PushContext, request: GenerateRequest) =>
    grpcProxyShape(proxy, push, request, true),
  // Each resource is named by the request and read only from its own name.
  resourcePerName: true,
  unaffectedBy: () => GRPC_RDS_UNAFFECTED,
  ...stepwise(grpcRouteConfigurations),
};

/** The RouteConfigurations of {@link grpcRdsGenerator}, one per step. */
function* grpcRouteConfigurations(
  proxy: Proxy,
  push: PushContext,
  request: GenerateRequest,
): Generator<GeneratedResource> {
  for (const target of grpcTargets(push.derived, request.names, proxy, push.servicesVisibleTo(proxy))) {
    const { plan, virtualService, dependsOn } = planRouteConfiguration(target, proxy, push);
    const spec = virtualService?.resource.spec;
    yield {
      name: target.name,
      key: cacheKey(TYPE_URL.route, [stableJson(plan)], dependsOn),
      build: () => routeConfiguration(plan, spec),
    };
  }
}
