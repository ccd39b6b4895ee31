/**
 * Which config kinds cannot change each Envoy type, by proxy type: the reference's skip lists
 * (`skippedCdsConfigs`, `skippedEdsConfigs`, `skippedLdsConfigs`, `skippedRdsConfigs`), narrowed or widened to
 * what these generators read. A kind is listed only when nothing the type's generator calls reads it:
 *
 * - CDS reads services and their endpoints (identities, DNS endpoints), DestinationRules, the Sidecar scope and
 *   ingress, RequestAuthentications (JWKS clusters) and, for gateways, Gateways and their VirtualServices
 *   (`DISCOVERY_FILTER_GATEWAY_CLUSTER_CONFIG`, AUTO_PASSTHROUGH clones). A sidecar's scope imports services by
 *   its egress hosts alone, so VirtualServices never change a sidecar's clusters (the reference keeps them for
 *   CDS because its scopes also import their destinations).
 * - EDS reads services, endpoints, DestinationRules (subsets, locality load balancing) and the scope.
 * - LDS of a sidecar reads services, endpoints at its addresses, the scope, VirtualServices (which one
 *   claims a host, and its TCP and TLS routes: everything but the HTTP routes, so `VIRTUAL_SERVICE_HTTP`,
 *   changes to HTTP routes alone, is listed), PeerAuthentications, AuthorizationPolicies and
 *   RequestAuthentications, never a DestinationRule (L4 routes name subsets without reading them). A
 *   gateway's is left as the reference leaves it.
 * - RDS reads services, VirtualServices, DestinationRules (hash policies) and the scope; a gateway's also its
 *   Gateways.
 * - SDS reads the gateway credentials alone.
 *
 * WorkloadEntries and WorkloadGroups reach generators only as service and endpoint changes, never by kind.
 * EnvoyFilters are listed nowhere, as in the reference. `tests`: `unaffected_kinds_test.ts` regenerates each
 * type after a change of each listed kind and finds the same bytes.
 *
 * @module
 */
import type { Proxy } from "../../model/proxy.ts";
import { LISTENER_BLIND_KINDS } from "../../push/listener_conflicts.ts";
import { INBOUND_SECURITY, kinds, REGISTRY_ONLY } from "../unaffected_kinds.ts";

const CDS_SIDECAR = kinds(
  ...REGISTRY_ONLY,
  "VirtualService",
  "Gateway",
  "PeerAuthentication",
  "AuthorizationPolicy",
  "Secret",
);
const CDS_ROUTER = kinds(...REGISTRY_ONLY, ...INBOUND_SECURITY, "Sidecar", "Secret");
const EDS = kinds(...REGISTRY_ONLY, ...INBOUND_SECURITY, "VirtualService", "Gateway", "Secret");
const LDS_SIDECAR = LISTENER_BLIND_KINDS;
const LDS_ROUTER = kinds(...REGISTRY_ONLY);
const RDS_SIDECAR = kinds(...REGISTRY_ONLY, ...INBOUND_SECURITY, "Gateway", "Secret");
const RDS_ROUTER = kinds(...REGISTRY_ONLY, ...INBOUND_SECURITY, "Sidecar", "Secret");
const SDS = kinds(
  ...REGISTRY_ONLY,
  ...INBOUND_SECURITY,
  "ServiceEntry",
  "VirtualService",
  "DestinationRule",
  "Gateway",
  "Sidecar",
);

/** Kinds whose changes cannot change a proxy's Envoy clusters. */
export function cdsUnaffectedBy(proxy: Proxy): ReadonlySet<string> {
  return proxy.type === "router" ? CDS_ROUTER : CDS_SIDECAR;
}

/** Kinds whose changes cannot change a proxy's Envoy endpoints. */
export function edsUnaffectedBy(_proxy: Proxy): ReadonlySet<string> {
  return EDS;
}

/** Kinds whose changes cannot change a proxy's Envoy listeners. */
export function ldsUnaffectedBy(proxy: Proxy): ReadonlySet<string> {
  return proxy.type === "router" ? LDS_ROUTER : LDS_SIDECAR;
}

/** Kinds whose changes cannot change a proxy's Envoy routes. */
export function rdsUnaffectedBy(proxy: Proxy): ReadonlySet<string> {
  return proxy.type === "router" ? RDS_ROUTER : RDS_SIDECAR;
}

/** Kinds whose changes cannot change the secrets a gateway is served. */
export function sdsUnaffectedBy(_proxy: Proxy): ReadonlySet<string> {
  return SDS;
}
