/**
 * The shape of an Envoy proxy for the generators that can share their work between proxies (EDS and RDS):
 * everything of the proxy they read, so two proxies with equal shapes get equal resources from one snapshot and
 * request and the server generates once per shape. CDS and LDS read the proxy's own addresses (its inbound
 * clusters and listeners), so they are not shared this way.
 *
 * What EDS reads: the proxy's type, namespace (only through DestinationRule precedence and hostname lookups,
 * so namespaces that see the snapshot alike — `PushContext.namespaceView` — share a shape) and Sidecar scope
 * (which clusters it sees), and its locality (locality load balancing). What RDS reads: type, namespace and DNS
 * domain (short names), scope, and its labels (`sourceLabels` matches; for a gateway, which Gateways select it).
 *
 * @module
 */
import type { Proxy } from "../../model/proxy.ts";
import type { PushContext } from "../../push/push_context.ts";
import { frozenJson } from "../fingerprint.ts";
import { clusterDomainOf } from "../grpc_target.ts";

/**
 * The shape of `proxy`, with its locality, its labels, or its namespace's short names for the generators that
 * read them.
 */
export function envoyProxyShape(
  proxy: Proxy,
  push: PushContext,
  reads: { readonly locality?: boolean; readonly labels?: boolean; readonly shortNames?: boolean },
): string {
  const scope = push.sidecarScope(proxy);
  // Without short names to complete, a namespace matters only when the snapshot singles it out.
  const namespaced = reads.shortNames === true || push.namespaceView(proxy.namespace) !== "";
  const parts = namespaced
    ? [proxy.type, proxy.namespace, proxy.dnsDomain, scope.name, scope.namespace]
    : [proxy.type, "", clusterDomainOf(proxy.dnsDomain), scope.name];
  return JSON.stringify(parts) +
    (reads.locality && proxy.locality ? frozenJson(push.derived, proxy.locality) : "") + "|" +
    (reads.labels ? frozenJson(push.derived, proxy.metadata.labels) : "");
}
