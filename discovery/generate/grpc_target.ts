/**
 * Which service port a proxyless gRPC client means by a listener name. gRPC's xDS resolver asks LDS for the
 * listener named exactly as the target's authority: `xds:///greeter.example.svc.cluster.local:7070` asks for
 * `greeter.example.svc.cluster.local:7070`, and `xds:///greeter:7070` for `greeter:7070`. Short names resolve
 * as the orchestrator's DNS would from the client's namespace (`greeter` → `greeter.<ns>.svc.<domain>`).
 *
 * @module
 */
import { isIp } from "@mesh/shared/config/validation/ip";
import { isWildcardHost, mostSpecificMatch } from "../model/host_match.ts";
import type { Proxy } from "../model/proxy.ts";
import type { Service, ServicePort } from "../model/service.ts";
import { type DerivedMemo, derivedTable } from "../push/derived_memo.ts";

/** A listener name resolved to the service port it reaches. */
export interface GrpcTarget {
  /** The listener (and route configuration) name, exactly as the client asked for it. */
  readonly name: string;
  /** The service the name resolves to. */
  readonly service: Service;
  /** The port of that service the name resolves to. */
  readonly port: ServicePort;
}

/** The host and optional port of a `host:port` authority (`[v6]:port` for IPv6); undefined when malformed. */
export function splitHostPort(authority: string): { host: string; port?: number } | undefined {
  let host = authority;
  let portText: string | undefined;
  if (authority.startsWith("[")) {
    const close = authority.indexOf("]");
    if (close < 0) return undefined;
    host = authority.slice(1, close);
    const rest = authority.slice(close + 1);
    if (rest !== "") {
      if (!rest.startsWith(":")) return undefined;
      portText = rest.slice(1);
    }
  } else {
    const colon = authority.lastIndexOf(":");
    // A bare IPv6 address has several colons and no port.
    if (colon >= 0 && authority.indexOf(":") === colon) {
      host = authority.slice(0, colon);
      portText = authority.slice(colon + 1);
    }
  }
  if (host === "") return undefined;
  if (portText === undefined) return { host };
  if (!/^[0-9]{1,5}$/.test(portText)) return undefined;
  const port = Number(portText);
  return port >= 1 && port <= 65535 ? { host, port } : undefined;
}

const GRPC_SERVICES = derivedTable<readonly Service[], undefined, readonly Service[]>("grpcServices");
const BY_HOSTNAME = derivedTable<readonly Service[], undefined, ReadonlyMap<string, Service>>(
  "grpcHostIndexes",
);

/**
 * Services a gRPC proxy can reach: those of its scope that have endpoints to balance over or resolve. Computed
 * once per (frozen) scope list, in `memo` (a snapshot's).
 */
export function grpcServices(memo: DerivedMemo, scope: readonly Service[]): readonly Service[] {
  // Passthrough services have no endpoints a client could pick: gRPC cannot send to the original destination.
  return memo.get(
    GRPC_SERVICES,
    scope,
    undefined,
    () => Object.freeze(scope.filter((s) => s.resolution !== "Passthrough")),
  );
}

function byHostname(memo: DerivedMemo, services: readonly Service[]): ReadonlyMap<string, Service> {
  return memo.get(BY_HOSTNAME, services, undefined, () => new Map(services.map((s) => [s.hostname, s])));
}

/** The service of exactly this hostname among `services` (a frozen list of `memo`'s snapshot). */
export function serviceByHostname(
  memo: DerivedMemo,
  services: readonly Service[],
  hostname: string,
): Service | undefined {
  return byHostname(memo, services).get(hostname);
}

/** The cluster's DNS domain in a proxy's DNS domain (`cluster.local` in `ns.svc.cluster.local`), or "". */
export function clusterDomainOf(dnsDomain: string): string {
  const svc = dnsDomain.indexOf(".svc.");
  return svc < 0 ? "" : dnsDomain.slice(svc + ".svc.".length);
}

const SHORT_HOSTS = derivedTable<readonly string[], undefined, boolean>("grpcShortHosts", { carried: true });

/**
 * True when some listener name in `names` has a host without a dot, which only the proxy's own DNS domain
 * (its namespace) completes. Remembered per list in `memo`: a connection keeps one list until its watch changes.
 */
export function namesShortHost(memo: DerivedMemo, names: readonly string[]): boolean {
  return memo.get(
    SHORT_HOSTS,
    names,
    undefined,
    () => names.some((name) => !(splitHostPort(name)?.host ?? name).includes(".")),
  );
}

/** The hostnames a (possibly short) host stands for from the proxy's namespace, most literal first. */
export function candidateHostnames(host: string, proxy: Proxy): string[] {
  const out = [host];
  const clusterDomain = clusterDomainOf(proxy.dnsDomain);
  const dots = host.split(".").length - 1;
  if (dots === 0) out.push(`${host}.${proxy.dnsDomain}`);
  if (clusterDomain !== "") {
    if (dots === 1) out.push(`${host}.svc.${clusterDomain}`);
    if (host.endsWith(".svc")) out.push(`${host}.${clusterDomain}`);
  }
  return out;
}

/** The service a host names among `services`: by hostname (short names expanded), wildcard host, or address. */
export function findService(
  memo: DerivedMemo,
  host: string,
  proxy: Proxy,
  services: readonly Service[],
): Service | undefined {
  const index = byHostname(memo, services);
  for (const candidate of candidateHostnames(host, proxy)) {
    const found = index.get(candidate);
    if (found !== undefined) return found;
  }
  if (isIp(host)) return services.find((s) => s.addresses.includes(host));
  const wildcard = mostSpecificMatch(
    host,
    services.filter((s) => isWildcardHost(s.hostname)).map((s) => s.hostname),
  );
  return wildcard === undefined ? undefined : index.get(wildcard);
}

/**
 * Resolves one listener name. Without a port, a service with exactly one port is meant; otherwise the name
 * names nothing. Undefined when no reachable service port matches.
 */
export function resolveGrpcTarget(
  memo: DerivedMemo,
  name: string,
  proxy: Proxy,
  services: readonly Service[],
): GrpcTarget | undefined {
  const parsed = splitHostPort(name);
  if (parsed === undefined) return undefined;
  const service = findService(memo, parsed.host, proxy, services);
  if (service === undefined) return undefined;
  const port = parsed.port === undefined
    ? (service.ports.length === 1 ? service.ports[0] : undefined)
    : service.ports.find((p) => p.port === parsed.port);
  return port === undefined ? undefined : { name, service, port };
}

/**
 * The targets a request names: each requested name that resolves, or, for a wildcard request (no names),
 * every port of every reachable service as `hostname:port`.
 */
export function grpcTargets(
  memo: DerivedMemo,
  names: readonly string[],
  proxy: Proxy,
  scope: readonly Service[],
): GrpcTarget[] {
  const services = grpcServices(memo, scope);
  if (names.length === 0) {
    return services.flatMap((service) =>
      service.ports.map((port) => ({ name: `${service.hostname}:${port.port}`, service, port }))
    );
  }
  const out: GrpcTarget[] = [];
  for (const name of new Set(names)) {
    const target = resolveGrpcTarget(memo, name, proxy, services);
    if (target !== undefined) out.push(target);
  }
  return out;
}
