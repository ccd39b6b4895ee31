/**
 * Facts about xDS resource types the protocol depends on: which types are wildcard, and the order in which
 * a push sends them (clusters before their endpoints, listeners before their routes, so a proxy never
 * references something it has not been sent).
 *
 * @module
 */
import { NAME_TABLE_TYPE_URLS } from "@mesh/proto/name_table";
import { TYPE_URL } from "@mesh/proto/type_urls";

const PUSH_ORDER: readonly string[] = [
  TYPE_URL.cluster,
  TYPE_URL.endpoint,
  TYPE_URL.listener,
  TYPE_URL.route,
  TYPE_URL.secret,
];

/**
 * The type whose update obliges a push to send `typeUrl` too, unchanged or not: Envoy warms an updated
 * cluster until an EDS response names it, and an updated listener until RDS answers (a SotW proxy whose
 * watched names did not change asks for nothing new, so only a push can end the warming).
 */
export function resentAfter(typeUrl: string): string | undefined {
  if (typeUrl === TYPE_URL.endpoint) return TYPE_URL.cluster;
  if (typeUrl === TYPE_URL.route) return TYPE_URL.listener;
  return undefined;
}

/**
 * True for CDS, LDS and the name table, where an empty list of names means "every resource" rather than
 * "none" (agents ask for the name table without names, as Istio's does).
 */
export function isWildcardType(typeUrl: string): boolean {
  return typeUrl === TYPE_URL.cluster || typeUrl === TYPE_URL.listener || NAME_TABLE_TYPE_URLS.has(typeUrl);
}

/** Sorts type URLs into push order: CDS, EDS, LDS, RDS, SDS, then any other type by URL. */
export function pushOrder(typeUrls: Iterable<string>): string[] {
  const rank = (t: string) => {
    const i = PUSH_ORDER.indexOf(t);
    return i < 0 ? PUSH_ORDER.length : i;
  };
  return [...typeUrls].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}
