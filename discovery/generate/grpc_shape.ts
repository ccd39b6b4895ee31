/**
 * The shape of a proxyless gRPC client: everything of the proxy the gRPC generators read, so two clients with
 * equal shapes get equal resources from one snapshot and request (the server then generates once per shape).
 *
 * What the generators read of a proxy: its type and Sidecar scope (chosen by its type, namespace and labels,
 * and named by the scope); its namespace only through the push context (visibility, DestinationRule
 * precedence, `sourceNamespace`), which says when a namespace sees the snapshot like any other
 * ({@link PushContext.namespaceView}); its DNS domain, whose cluster part completes `name.ns` listener names
 * and whose whole completes dotless ones; and for RDS its labels (`sourceLabels`).
 *
 * @module
 */
import type { GenerateRequest } from "./generator.ts";
import type { Proxy } from "../model/proxy.ts";
import type { PushContext } from "../push/push_context.ts";
import { derivedTable } from "../push/derived_memo.ts";
import { frozenJson } from "./fingerprint.ts";
import { clusterDomainOf, namesShortHost } from "./grpc_target.ts";

/**
 * gRPC shapes by proxy object and what of the request they read, per snapshot (not carried: scopes and
 * namespace views are the snapshot's). A proxy is immutable, so a changed proxy is a new object.
 */
const GRPC_SHAPES = derivedTable<Proxy, number, string>("grpcProxyShapes");

/** The shape of `proxy` for a generator; `withLabels` for generators that match on the proxy's labels. */
export function grpcProxyShape(
  proxy: Proxy,
  push: PushContext,
  request: GenerateRequest,
  withLabels: boolean,
): string {
  const view = push.namespaceView(proxy.namespace);
  // A wildcard request lists services by hostname: no short name is ever completed.
  const completesShortNames = view !== "" || namesShortHost(push.derived, request.names);
  // All that is left depends on the proxy and snapshot alone: its four types share one computation each.
  const key = (withLabels ? 2 : 0) | (completesShortNames ? 1 : 0);
  return push.derived.get(GRPC_SHAPES, proxy, key, () => {
    const scope = push.sidecarScope(proxy);
    return JSON.stringify([
      proxy.type,
      view,
      clusterDomainOf(proxy.dnsDomain),
      completesShortNames ? proxy.dnsDomain : "",
      scope.name,
    ]) + (withLabels ? frozenJson(push.derived, proxy.metadata.labels) : "");
  });
}
