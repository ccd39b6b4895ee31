/**
 * The shape of an Envoy proxy for the generators that can share their work between proxies (EDS and RDS):
 * everything of the proxy they read, so two proxies with equal shapes get equal resources from one snapshot and
 * request and the server generates once per shape.
 *
 * What EDS reads: the proxy's type, namespace (only through DestinationRule precedence and hostname lookups,
 * so namespaces that see the snapshot alike — `PushContext.namespaceView` — share a shape) and Sidecar scope
 * (which clusters it sees), and its locality (locality load balancing). What RDS reads: type, namespace and DNS
 * domain (short names), scope, and its labels (`sourceLabels` matches; for a gateway, which Gateways select it).
 * CDS and LDS of a sidecar also read its own inbound side and the security policies that select it: their
 * shapes add both ({@link envoySidecarShape}), so replicas of one workload, and sidecars at no endpoint, share
 * them. A gateway's CDS and LDS are not shared.
 *
 * @module
 */
import type { Proxy } from "../../model/proxy.ts";
import type { PushContext } from "../../push/push_context.ts";
import { derivedTable } from "../../push/derived_memo.ts";
import { frozenJson } from "../fingerprint.ts";
import { clusterDomainOf } from "../grpc_target.ts";

/** What a shape reads of its proxy besides the common part. */
export interface ShapeReads {
  readonly locality?: boolean;
  readonly labels?: boolean;
  readonly shortNames?: boolean;
}

/**
 * Proxy shapes by proxy object and reads, per snapshot (not carried: the scope and namespace views are the
 * snapshot's). A proxy is immutable, so a changed proxy is a new object with entries of its own.
 */
const PROXY_SHAPES = derivedTable<Proxy, number, string>("envoyProxyShapes");

/**
 * The shape of `proxy`, with its locality, its labels, or its namespace's short names for the generators that
 * read them.
 */
export function envoyProxyShape(proxy: Proxy, push: PushContext, reads: ShapeReads): string {
  // CDS, LDS and RDS ask for one proxy's shape with the same reads in one snapshot: worked out once.
  const key = (reads.locality ? 1 : 0) | (reads.labels ? 2 : 0) | (reads.shortNames ? 4 : 0);
  return push.derived.get(PROXY_SHAPES, proxy, key, () => computeEnvoyProxyShape(proxy, push, reads));
}

/** {@link envoyProxyShape} worked out afresh, without the snapshot's memo. */
export function computeEnvoyProxyShape(proxy: Proxy, push: PushContext, reads: ShapeReads): string {
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

/**
 * The shape of a sidecar for a generator that also reads its inbound side (CDS, LDS): its type, scope and
 * labels, its namespace where the snapshot singles it out, and `inbound`, a canonical form of what the
 * generator derives from the proxy's addresses and of the security policies that select it (which policies
 * apply, by key: the namespace matters to them only through that choice). Undefined for a gateway: its
 * clusters and listeners are its own.
 */
export function envoySidecarShape(
  proxy: Proxy,
  push: PushContext,
  inbound: () => string,
): string | undefined {
  if (proxy.type !== "sidecar") return undefined;
  return `${envoyProxyShape(proxy, push, { labels: true })}|${inbound()}`;
}
