/**
 * LDS for proxyless gRPC: one API listener per service port the client asks for (or every reachable one for a
 * wildcard request), named as asked. Each holds an HttpConnectionManager that takes its routes from RDS over
 * ADS under the same name, with the fault filter (gRFC A33) and the router filter last, as gRPC requires.
 *
 * @module
 */
import { TYPE_URL } from "@mesh/proto/type_urls";
import type { Proxy } from "../model/proxy.ts";
import type { PushContext } from "../push/push_context.ts";
import { serviceKey } from "../push/push_request.ts";
import { GRPC_LDS_UNAFFECTED } from "./grpc_unaffected_kinds.ts";
import { grpcProxyShape } from "./grpc_shape.ts";
import {
  cacheKey,
  type GeneratedResource,
  type GenerateRequest,
  stepwise,
  type XdsGenerator,
} from "./generator.ts";
import { grpcTargets } from "./grpc_target.ts";
import { FAULT_FILTER_NAME, ROUTER_FILTER_NAME } from "./route_action.ts";
import type { EnvoyObject } from "./route_match.ts";

/** The API listener named `name`, whose routes are the RouteConfiguration of the same name. */
export function apiListener(name: string): EnvoyObject {
  return {
    name,
    api_listener: {
      api_listener: {
        "@type": TYPE_URL.httpConnectionManager,
        stat_prefix: name,
        rds: { config_source: { ads: {}, resource_api_version: "V3" }, route_config_name: name },
        http_filters: [
          { name: FAULT_FILTER_NAME, typed_config: { "@type": TYPE_URL.fault } },
          { name: ROUTER_FILTER_NAME, typed_config: { "@type": TYPE_URL.router } },
        ],
      },
    },
  };
}

/** Builds the API listeners a proxyless gRPC client asks for. Reads the proxy's service scope only. */
export const grpcLdsGenerator: XdsGenerator<PushContext> = {
  typeUrl: TYPE_URL.listener,
  shapeOf: (proxy: Proxy, push: PushContext, request: GenerateRequest) =>
    grpcProxyShape(proxy, push, request, false),
  // Each resource is named by the request and read only from its own name.
  resourcePerName: true,
  unaffectedBy: () => GRPC_LDS_UNAFFECTED,
  ...stepwise(grpcListeners),
};

/** The API listeners of {@link grpcLdsGenerator}, one per step. */
function* grpcListeners(
  proxy: Proxy,
  push: PushContext,
  request: GenerateRequest,
): Generator<GeneratedResource> {
  for (const target of grpcTargets(push.derived, request.names, proxy, push.servicesVisibleTo(proxy))) {
    yield {
      name: target.name,
      // The listener is a function of its name alone; the service only decides whether it exists.
      key: cacheKey(TYPE_URL.listener, [target.name], [
        serviceKey(target.service.namespace, target.service.hostname),
      ]),
      build: () => apiListener(target.name),
    };
  }
}
