import { isDnsLabel } from "./labels.ts";
import { isIp } from "./ip.ts";

const MAX_DOMAIN_LENGTH = 255;
const WILDCARD_LABEL = /^(\*|(\*|\*-)?[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)$/;

function checkLength(name: string): string | undefined {
  if (name.length === 0) return "empty domain name not allowed";
  if (name.length > MAX_DOMAIN_LENGTH) return `domain name "${name}" too long (max 255)`;
  return undefined;
}

function checkLabels(domain: string, whole: string): string | undefined {
  const parts = domain.split(".");
  const top = parts[parts.length - 1];
  if (/^[0-9]+$/.test(top)) {
    return `domain name "${whole}" invalid (top level domain "${top}" cannot be all-numeric)`;
  }
  for (const [i, label] of parts.entries()) {
    // A trailing dot (`mesh.io.`) is an unambiguous absolute name.
    if (i === parts.length - 1 && label === "") return undefined;
    if (!isDnsLabel(label)) return `domain name "${whole}" invalid (label "${label}" invalid)`;
  }
  return undefined;
}

/** Checks a domain name: DNS labels joined by dots, not all-numeric at the top. Short names pass. */
export function checkFqdn(name: string): string | undefined {
  return checkLength(name) ?? checkLabels(name, name);
}

/**
 * Checks a domain that may start with a wildcard label: `*`, `*.mesh.io`, `*-svc.mesh.io`, or a plain
 * domain name. Returns a message when invalid.
 */
export function checkWildcardDomain(name: string): string | undefined {
  const lengthError = checkLength(name);
  if (lengthError) return lengthError;
  const dot = name.indexOf(".");
  const first = dot < 0 ? name : name.slice(0, dot);
  if (first.length > 63 || !WILDCARD_LABEL.test(first)) {
    return `domain name "${name}" invalid (label "${first}" invalid)`;
  }
  return dot < 0 ? undefined : checkLabels(name.slice(dot + 1), name);
}

/** Checks a host that may be a wildcard domain or an IP address (virtual service hosts, SNI hosts). */
export function checkWildcardDomainOrIp(name: string): string | undefined {
  const error = checkWildcardDomain(name);
  return error && !isIp(name) ? error : undefined;
}

function isWildcard(host: string): boolean {
  return host.startsWith("*");
}

/**
 * Reports whether two hosts overlap: equal, or one wildcard covers the other (`*.mesh.io` and
 * `a.mesh.io`, `*.io` and `*.mesh.io`).
 */
export function hostsMatch(a: string, b: string): boolean {
  if (isWildcard(a) && isWildcard(b)) {
    return a.length < b.length ? b.slice(1).endsWith(a.slice(1)) : a.slice(1).endsWith(b.slice(1));
  }
  if (isWildcard(a)) return b.endsWith(a.slice(1));
  if (isWildcard(b)) return a.endsWith(b.slice(1));
  return a === b;
}

/** Reports whether every name `host` covers is also covered by `other`. */
export function hostSubsetOf(host: string, other: string): boolean {
  if (isWildcard(host)) return isWildcard(other) && host.slice(1).endsWith(other.slice(1));
  if (isWildcard(other)) return host.endsWith(other.slice(1));
  return host === other;
}

/** Whose host list {@link checkNamespacedHost} checks: gateways also accept IPs and old-style bare hosts. */
export type NamespacedHostOwner = "gateway" | "sidecar";

function checkHostPart(host: string, owner: NamespacedHostOwner): string[] {
  const errors: string[] = [];
  if (host !== "*" && !host.includes(".")) {
    errors.push(`short names (non FQDN) are not allowed, got "${host}"`);
  }
  const domainError = checkWildcardDomain(host);
  if (domainError && !(owner === "gateway" && isIp(host))) errors.push(domainError);
  return errors;
}

/**
 * Checks a `namespace/dnsName` host of a gateway server or sidecar egress listener. The namespace is `*`,
 * `.`, a namespace name, or (sidecars only) `~`; the name is a wildcard FQDN. Gateways also accept a bare
 * host without namespace. Returns every problem found.
 */
export function checkNamespacedHost(value: string, owner: NamespacedHostOwner): string[] {
  const slash = value.indexOf("/");
  if (slash < 0) {
    if (owner === "gateway") return checkHostPart(value, owner);
    return [`host "${value}" must be of form namespace/dnsName`];
  }
  const namespace = value.slice(0, slash);
  const host = value.slice(slash + 1);
  if (namespace === "" || host === "") return [`namespace and dnsName in host "${value}" cannot be empty`];
  const errors: string[] = [];
  const special = owner === "sidecar" ? ["*", ".", "~"] : ["*", "."];
  if (!special.includes(namespace) && !isDnsLabel(namespace)) {
    errors.push(`invalid namespace value "${namespace}" in ${owner} host "${value}"`);
  }
  return [...errors, ...checkHostPart(host, owner)];
}
