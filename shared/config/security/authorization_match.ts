import { childPath, type ValidationReport } from "../validation/report.ts";
import { objectAt } from "../validation/fields.ts";
import { isLowercaseDnsLabel } from "../validation/labels.ts";
import { type MatchValueKind, matchValuesAt } from "./_match_values.ts";

/** Who sends a request: peer identities, request (JWT) identities, namespaces and IP ranges. */
export interface AuthorizationSource {
  /** Peer identities (`<trust domain>/ns/<namespace>/sa/<account>`) from mutual TLS; any one matches. */
  readonly principals?: readonly string[];
  /** Peer identities that must not match. */
  readonly notPrincipals?: readonly string[];
  /** Request identities (`<iss>/<sub>` of a validated JWT); HTTP only. */
  readonly requestPrincipals?: readonly string[];
  /** Request identities that must not match; HTTP only. */
  readonly notRequestPrincipals?: readonly string[];
  /** Namespaces of the peer, from its mutual TLS identity. */
  readonly namespaces?: readonly string[];
  /** Peer namespaces that must not match. */
  readonly notNamespaces?: readonly string[];
  /** IPs or CIDR ranges of the direct peer (the connection's source). */
  readonly ipBlocks?: readonly string[];
  /** Peer IPs or CIDR ranges that must not match. */
  readonly notIpBlocks?: readonly string[];
  /** IPs or CIDR ranges of the original client, as `X-Forwarded-For` or the proxy protocol tell it. */
  readonly remoteIpBlocks?: readonly string[];
  /** Original client IPs or CIDR ranges that must not match. */
  readonly notRemoteIpBlocks?: readonly string[];
}

/** What a request asks for: hosts, ports (decimal strings), methods and paths. */
export interface AuthorizationOperation {
  /** Request `Host` values; HTTP only. */
  readonly hosts?: readonly string[];
  /** Hosts that must not match; HTTP only. */
  readonly notHosts?: readonly string[];
  /** Destination ports, as decimal strings. */
  readonly ports?: readonly string[];
  /** Destination ports that must not match, as decimal strings. */
  readonly notPorts?: readonly string[];
  /** HTTP methods (or gRPC's `POST`); HTTP only. */
  readonly methods?: readonly string[];
  /** Methods that must not match; HTTP only. */
  readonly notMethods?: readonly string[];
  /** Request paths, exact or with a `*` prefix or suffix; HTTP only. */
  readonly paths?: readonly string[];
  /** Paths that must not match; HTTP only. */
  readonly notPaths?: readonly string[];
}

/** Source fields and the kind of their values. */
const SOURCE_FIELDS: Readonly<Record<keyof AuthorizationSource, MatchValueKind>> = {
  principals: "string",
  notPrincipals: "string",
  requestPrincipals: "string",
  notRequestPrincipals: "string",
  namespaces: "string",
  notNamespaces: "string",
  ipBlocks: "ip",
  notIpBlocks: "ip",
  remoteIpBlocks: "ip",
  notRemoteIpBlocks: "ip",
};

/** Operation fields and the kind of their values. */
const OPERATION_FIELDS: Readonly<Record<keyof AuthorizationOperation, MatchValueKind>> = {
  hosts: "string",
  notHosts: "string",
  ports: "port",
  notPorts: "port",
  methods: "string",
  notMethods: "string",
  paths: "string",
  notPaths: "string",
};

/** Fields that only HTTP requests carry; on plain TCP traffic the proxy cannot evaluate them. */
export const HTTP_ONLY_SOURCE_FIELDS: readonly (keyof AuthorizationSource)[] = [
  "requestPrincipals",
  "notRequestPrincipals",
];

/** Operation fields that only HTTP requests carry. */
export const HTTP_ONLY_OPERATION_FIELDS: readonly (keyof AuthorizationOperation)[] = [
  "hosts",
  "notHosts",
  "methods",
  "notMethods",
  "paths",
  "notPaths",
];

/** The non-empty fields of a validated source or operation, for rule-level checks. */
export type PresentFields<T> = ReadonlySet<keyof T>;

/**
 * Validates a `source` at `path`: known fields only, at least one non-empty field, values valid for the
 * field (IPs/CIDRs for the `*IpBlocks` fields, wildcard rules for the rest). Returns the non-empty fields.
 */
export function validateSource(
  report: ValidationReport,
  path: string,
  value: unknown,
): PresentFields<AuthorizationSource> {
  const present = validateMatchObject(report, path, value, SOURCE_FIELDS, "source");
  for (const field of ["namespaces", "notNamespaces"] as const) {
    if (!present.has(field)) continue;
    const source = value as Record<string, unknown>;
    (source[field] as unknown[]).forEach((ns, i) => {
      if (typeof ns !== "string" || ns === "" || ns.includes("*") || isLowercaseDnsLabel(ns)) return;
      report.warn(
        childPath(childPath(path, field), i),
        `"${ns}" is not a valid namespace name and never matches`,
      );
    });
  }
  return present;
}

/**
 * Validates an `operation` at `path`: known fields only, at least one non-empty field, ports as decimal
 * strings, wildcard rules for hosts, methods and paths. Returns the non-empty fields.
 */
export function validateOperation(
  report: ValidationReport,
  path: string,
  value: unknown,
): PresentFields<AuthorizationOperation> {
  const present = validateMatchObject(report, path, value, OPERATION_FIELDS, "operation");
  const operation = value as Record<string, unknown>;
  for (const field of ["methods", "notMethods"] as const) {
    if (!present.has(field)) continue;
    (operation[field] as unknown[]).forEach((method, i) => {
      if (typeof method !== "string" || method === method.toUpperCase()) return;
      report.warn(
        childPath(childPath(path, field), i),
        `HTTP methods are case-sensitive; "${method}" never matches "${method.toUpperCase()}"`,
      );
    });
  }
  for (const field of ["paths", "notPaths"] as const) {
    if (!present.has(field)) continue;
    (operation[field] as unknown[]).forEach((p, i) => {
      if (typeof p !== "string" || p === "" || p.startsWith("/") || p.startsWith("*")) return;
      report.warn(childPath(childPath(path, field), i), `request paths start with "/"; "${p}" never matches`);
    });
  }
  return present;
}

/** Shared shape of source and operation: an object of match lists, not all empty. */
function validateMatchObject<T>(
  report: ValidationReport,
  path: string,
  value: unknown,
  fields: Readonly<Record<keyof T & string, MatchValueKind>>,
  what: string,
): PresentFields<T> {
  const names = Object.keys(fields) as (keyof T & string)[];
  const obj = objectAt(report, path, value, names);
  const present = new Set<keyof T>();
  if (obj === undefined) return present;
  let given = 0;
  for (const name of names) {
    const values = obj[name];
    matchValuesAt(report, childPath(path, name), values, fields[name]);
    if (Array.isArray(values) && values.length > 0) present.add(name);
    // A wrongly typed field was reported already; it still counts as given so the object is not "empty".
    if (values !== undefined && values !== null && !(Array.isArray(values) && values.length === 0)) given++;
  }
  if (given === 0) {
    report.error(path, `${what} must not be empty; set at least one of ${names.join(", ")}`);
  }
  return present;
}
