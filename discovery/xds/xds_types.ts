/**
 * Facts about xDS resource types the protocol depends on: which types are wildcard, and the order in which
 * a push sends them (clusters before their endpoints, listeners before their routes, so a proxy never
 * references something it has not been sent).
 *
 * @module
 */
import { TYPE_URL } from "../../proto/type_urls.ts";

const PUSH_ORDER: readonly string[] = [
  TYPE_URL.cluster,
  TYPE_URL.endpoint,
  TYPE_URL.listener,
  TYPE_URL.route,
  TYPE_URL.secret,
];

/** True for CDS and LDS, where an empty list of names means "every resource" rather than "none". */
export function isWildcardType(typeUrl: string): boolean {
  return typeUrl === TYPE_URL.cluster || typeUrl === TYPE_URL.listener;
}

/** Sorts type URLs into push order: CDS, EDS, LDS, RDS, SDS, then any other type by URL. */
export function pushOrder(typeUrls: Iterable<string>): string[] {
  const rank = (t: string) => {
    const i = PUSH_ORDER.indexOf(t);
    return i < 0 ? PUSH_ORDER.length : i;
  };
  return [...typeUrls].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}
