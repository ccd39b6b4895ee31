/**
 * Which config kinds cannot change each proxyless gRPC type, as `envoy/unaffected_kinds.ts` says for Envoy's:
 * a kind is listed only when nothing the type's generator calls reads it.
 *
 * - CDS reads the proxy's service scope (services, Sidecars), DestinationRules (subsets, policies) and, for
 *   DNS services, their endpoints.
 * - EDS reads services, endpoints, DestinationRules (subsets) and the scope.
 * - LDS reads the scope's services alone: a listener is a function of its name.
 * - RDS reads the scope's services, the VirtualServices bound to the mesh and DestinationRules (hashing).
 *
 * None reads a Gateway (a route's gateway binding is read from the VirtualService), a Secret or a security
 * policy: gRPC's xDS security needs certificate providers in its bootstrap, which these generators leave out.
 * EnvoyFilters are listed nowhere, as for Envoy. `tests`: `grpc_unaffected_kinds_test.ts`.
 *
 * @module
 */
import { INBOUND_SECURITY, kinds, REGISTRY_ONLY } from "./unaffected_kinds.ts";

const UNREAD = [...REGISTRY_ONLY, ...INBOUND_SECURITY, "Gateway", "Secret"];

/** Kinds whose changes cannot change a gRPC client's clusters. */
export const GRPC_CDS_UNAFFECTED: ReadonlySet<string> = kinds(...UNREAD, "VirtualService");
/** Kinds whose changes cannot change a gRPC client's endpoints. */
export const GRPC_EDS_UNAFFECTED: ReadonlySet<string> = kinds(...UNREAD, "VirtualService");
/** Kinds whose changes cannot change a gRPC client's API listeners. */
export const GRPC_LDS_UNAFFECTED: ReadonlySet<string> = kinds(...UNREAD, "VirtualService", "DestinationRule");
/** Kinds whose changes cannot change a gRPC client's routes. */
export const GRPC_RDS_UNAFFECTED: ReadonlySet<string> = kinds(...UNREAD);
