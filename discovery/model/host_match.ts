/**
 * Hostname matching with a leading wildcard label, as in Istio's host.Name: `*` matches every host,
 * `*.example.com` matches `a.example.com` and `a.b.example.com` (and `*.a.example.com`), never `example.com`.
 */

/** True when `host` starts with a wildcard label (`*` or `*.suffix`). */
export function isWildcardHost(host: string): boolean {
  return host.startsWith("*");
}

/**
 * True when the sets of hostnames `a` and `b` describe overlap (symmetric): `*.com` matches `foo.com`,
 * `*.foo.com` matches `*.com`.
 */
export function hostsMatch(a: string, b: string): boolean {
  if (a === b) return true;
  const aWild = isWildcardHost(a);
  const bWild = isWildcardHost(b);
  if (!aWild && !bWild) return false;
  const aSuffix = aWild ? a.slice(1) : a;
  const bSuffix = bWild ? b.slice(1) : b;
  if (aWild && bWild) return aSuffix.endsWith(bSuffix) || bSuffix.endsWith(aSuffix);
  return aWild ? b.endsWith(aSuffix) : a.endsWith(bSuffix);
}

/** True when every hostname `host` describes is also described by `pattern` (`foo.com` ⊂ `*.com`). */
export function hostSubsetOf(host: string, pattern: string): boolean {
  if (host === pattern || pattern === "*") return true;
  if (!isWildcardHost(pattern)) return false;
  const suffix = pattern.slice(1);
  return isWildcardHost(host) ? host.slice(1).endsWith(suffix) : host.endsWith(suffix);
}

/**
 * Orders hosts most specific first: exact hosts before wildcards, longer wildcards before shorter, then by
 * name, so the first match in a sorted list is the best one.
 */
export function compareHostSpecificity(a: string, b: string): number {
  const aWild = isWildcardHost(a);
  const bWild = isWildcardHost(b);
  if (aWild !== bWild) return aWild ? 1 : -1;
  if (aWild && a.length !== b.length) return b.length - a.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The most specific of `patterns` that `host` falls within, or undefined. */
export function mostSpecificMatch(host: string, patterns: Iterable<string>): string | undefined {
  let best: string | undefined;
  for (const p of patterns) {
    if (!hostSubsetOf(host, p)) continue;
    if (best === undefined || compareHostSpecificity(p, best) < 0) best = p;
  }
  return best;
}

/**
 * Resolves a short host name the way Istio does for VirtualService, DestinationRule and Sidecar hosts:
 * a name without dots (and not `*`) becomes `name.<namespace>.svc.<domain>`; others stay as they are.
 */
export function resolveShortName(host: string, namespace: string, domain: string): string {
  // IPv6 addresses have no dots but colons; they are never short names.
  if (host === "*" || host.includes(".") || host.includes(":")) return host;
  return domain === "" ? `${host}.${namespace}` : `${host}.${namespace}.svc.${domain}`;
}
