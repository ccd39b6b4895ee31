/**
 * The shape of a proxyless gRPC client: everything of the proxy the gRPC generators read, so two clients with
 * equal shapes get equal resources from one snapshot and request (the server then generates once per shape).
 *
 * What the generators read of a proxy: its Sidecar scope (chosen by its type, namespace and labels, and named
 * by the scope), its namespace (short-name lookups, DestinationRule precedence, `sourceNamespace`), its DNS
 * domain (short listener names), and for RDS its labels (`sourceLabels`).
 *
 * @module
 */
import type { Proxy } from "../model/proxy.ts";
import type { PushContext } from "../push/push_context.ts";
import { stableJson } from "./fingerprint.ts";

/** The shape of `proxy` for a generator; `withLabels` for generators that match on the proxy's labels. */
export function grpcProxyShape(proxy: Proxy, push: PushContext, withLabels: boolean): string {
  const scope = push.sidecarScope(proxy);
  return stableJson([
    proxy.namespace,
    proxy.dnsDomain,
    scope.name,
    scope.namespace,
    withLabels ? proxy.metadata.labels : null,
  ]);
}
