import type { HTTPRoute } from "@mesh/shared/config/networking/virtual_service_http";
import type { HTTPMatchRequest } from "@mesh/shared/config/networking/virtual_service_match";
import type { StringMatch } from "@mesh/shared/config/networking/string_match";

/**
 * Merges a root route that delegates with the delegate's routes, as Istio 1.9 does: each delegate route whose
 * matches fit inside the root's matches becomes a route with the combined matches and the root's policies
 * where the delegate sets none; delegate routes that conflict with the root are dropped.
 */
export function mergeDelegateRoutes(root: HTTPRoute, delegateRoutes: readonly HTTPRoute[]): HTTPRoute[] {
  const out: HTTPRoute[] = [];
  for (const route of delegateRoutes) {
    const merged = mergeHttpRoute(root, route);
    if (merged) out.push(merged);
  }
  return out;
}

function mergeHttpRoute(root: HTTPRoute, delegate: HTTPRoute): HTTPRoute | undefined {
  const match = mergeMatches(root.match ?? [], delegate.match ?? []);
  if (match === undefined) return undefined;
  const name = !delegate.name ? root.name : root.name ? `${root.name}-${delegate.name}` : delegate.name;
  const out: Record<string, unknown> = { ...delegate };
  if (match.length > 0) out.match = match;
  else delete out.match;
  if (name) out.name = name;
  const inherited = [
    "rewrite",
    "timeout",
    "retries",
    "fault",
    "mirror",
    "mirrorPercent",
    "mirrorPercentage",
    "corsPolicy",
    "headers",
  ] as const;
  for (const field of inherited) {
    if (out[field] === undefined && root[field] !== undefined) out[field] = root[field];
  }
  delete out.delegate;
  return out as HTTPRoute;
}

/** Combined matches, or undefined when some delegate match fits no root match (a conflict). */
function mergeMatches(
  root: readonly HTTPMatchRequest[],
  delegate: readonly HTTPMatchRequest[],
): HTTPMatchRequest[] | undefined {
  if (root.length === 0) return [...delegate];
  if (delegate.length === 0) return [...root];
  const out: HTTPMatchRequest[] = [];
  for (const leaf of delegate) {
    const fitting = root.filter((r) => !matchConflict(r, leaf));
    if (fitting.length === 0) return undefined;
    for (const r of fitting) out.push(mergeMatch(r, leaf));
  }
  return out;
}

/** True when a delegate match can select requests its root match does not. */
export function matchConflict(root: HTTPMatchRequest, leaf: HTTPMatchRequest): boolean {
  for (const field of ["uri", "scheme", "method", "authority"] as const) {
    if (stringMatchConflict(root[field], leaf[field])) return true;
  }
  for (const field of ["headers", "withoutHeaders", "queryParams"] as const) {
    for (const [key, value] of Object.entries(leaf[field] ?? {})) {
      if (stringMatchConflict(root[field]?.[key], value)) return true;
    }
  }
  if ((root.ignoreUriCase ?? false) !== (leaf.ignoreUriCase ?? false)) return true;
  if (root.port && leaf.port && root.port !== leaf.port) return true;
  if (root.sourceNamespace && leaf.sourceNamespace !== root.sourceNamespace) return true;
  for (const [key, value] of Object.entries(leaf.sourceLabels ?? {})) {
    const rootValue = root.sourceLabels?.[key];
    if (rootValue !== undefined && rootValue !== value) return true;
  }
  const rootGateways = root.gateways ?? [];
  const leafGateways = leaf.gateways ?? [];
  if (rootGateways.length > 0 && leafGateways.length > 0) {
    if (leafGateways.some((g) => !rootGateways.includes(g))) return true;
  }
  return false;
}

/** A leaf string match conflicts unless it selects a subset of the root's (regexes always conflict). */
function stringMatchConflict(root: StringMatch | undefined, leaf: StringMatch | undefined): boolean {
  if (!root || !leaf) return false;
  if (root.regex || leaf.regex) return true;
  if (root.exact) return leaf.prefix !== undefined && leaf.prefix !== "" || leaf.exact !== root.exact;
  if (root.prefix) {
    if (leaf.prefix) return !leaf.prefix.startsWith(root.prefix);
    if (leaf.exact) return !leaf.exact.startsWith(root.prefix);
  }
  return true;
}

function mergeMatch(root: HTTPMatchRequest, leaf: HTTPMatchRequest): HTTPMatchRequest {
  const out: Record<string, unknown> = { ...leaf };
  const name = !leaf.name ? root.name : root.name ? `${root.name}-${leaf.name}` : leaf.name;
  if (name) out.name = name;
  for (const field of ["uri", "scheme", "method", "authority", "sourceNamespace"] as const) {
    if (!leaf[field] && root[field]) out[field] = root[field];
  }
  for (const field of ["headers", "withoutHeaders", "queryParams", "sourceLabels"] as const) {
    if (root[field] || leaf[field]) out[field] = { ...root[field], ...leaf[field] };
  }
  if (!leaf.port && root.port) out.port = root.port;
  if ((leaf.gateways ?? []).length === 0 && root.gateways) out.gateways = root.gateways;
  return out as HTTPMatchRequest;
}
