/**
 * What a gateway (`router` proxy) serves, resolved from the Gateways that select it: one listener per port, a
 * filter chain per server on it (plain HTTP, or TLS terminated with the server's `credentialName` fetched over
 * SDS), and, per HTTP server, the route configuration `http.<port>` or `https.<port>.<server>` built from the
 * VirtualServices bound to the gateway whose hosts the server exposes. TCP servers (and TLS servers that
 * terminate) forward to the first applying `tcp` route of a bound VirtualService; PASSTHROUGH servers route by
 * SNI with the bound `tls` routes whose SNI hosts they expose; AUTO_PASSTHROUGH servers route by SNI to the
 * mesh's `outbound_.<port>_.<subset>_.<host>` clusters. An HTTP server with `tls.httpsRedirect` answers
 * every request with a redirect to HTTPS (`require_tls: ALL` on its virtual hosts, `gateway_resources.ts`).
 *
 * @module
 */
import type { Server } from "@mesh/shared/config/networking/gateway";
import { isMeshMutual } from "@mesh/shared/config/networking/tls_settings";
import { hostSubsetOf, isWildcardHost } from "../../model/host_match.ts";
import type { Proxy } from "../../model/proxy.ts";
import type { PushContext } from "../../push/push_context.ts";
import { configKey } from "../../push/push_request.ts";
import type { IndexedVirtualService } from "../../push/virtual_service_index.ts";
import type { IndexedGateway } from "../../push/gateway_index.ts";
import type { VirtualServiceSpec } from "@mesh/shared/config/networking/virtual_service";
import { virtualServiceFingerprint } from "../virtual_service_lookup.ts";
import {
  planGatewayL4Routes,
  planGatewayRoutes,
  type PlannedL4Routes,
  type PlannedRoute,
} from "../route_plan.ts";
import type { WeightedCluster } from "../route_action.ts";
import { type ListenerTelemetry, listenerTelemetry } from "./telemetry.ts";

/** How a gateway server terminates TLS. */
export type GatewayTlsPlan =
  | { readonly mode: "SIMPLE" | "MUTUAL"; readonly credentialName: string }
  | { readonly mode: "MESH_MUTUAL" };

/** One server of a gateway on a port. */
export interface GatewayServerPlan {
  /** `http.<port>` or `https.<port>.<server name>`: the route configuration of the server. */
  readonly routeName: string;
  /** The hosts the server exposes (without namespace prefixes). */
  readonly hosts: readonly string[];
  /**
   * Terminated TLS: SIMPLE or MUTUAL with `credentialName`'s secrets, or MESH_MUTUAL with the gateway's own
   * workload certificate and the mesh roots (no credential name).
   */
  readonly tls?: GatewayTlsPlan;
  /** What a non-HTTP server forwards to; absent for HTTP and HTTPS servers (they route through RDS). */
  readonly l4?: GatewayL4Plan;
  /** A plain HTTP server with `tls.httpsRedirect`: its hosts answer every request with a redirect to HTTPS. */
  readonly httpsRedirect?: boolean;
}

/** The forwarding of a TCP, TLS passthrough or AUTO_PASSTHROUGH server. */
export type GatewayL4Plan =
  | { readonly mode: "tcp"; readonly clusters: readonly WeightedCluster[] }
  | { readonly mode: "passthrough"; readonly routes: PlannedL4Routes["tls"] }
  | { readonly mode: "auto" };

/** One gateway listener. */
export interface GatewayListenerPlan {
  readonly port: number;
  readonly bind: string;
  readonly servers: readonly GatewayServerPlan[];
  /**
   * Where TLS servers' credentials come from: the discovery server over ADS when it serves them
   * (`MESHD_ENABLE_SDS_SERVER`, with a secret store), else the gateway's own agent over its SDS socket.
   */
  readonly credentialsFrom: "discovery" | "agent";
  /** Access logs and tracing of the listener's filters; absent: none. */
  readonly telemetry?: ListenerTelemetry;
}

/** One virtual host of a gateway route configuration. */
export interface GatewayVirtualHost {
  readonly host: string;
  readonly routes: readonly PlannedRoute[];
  /** The VirtualService's fingerprint. */
  readonly virtualService: string;
  /** The VirtualService's spec, which the routes' indices point into (not part of the key). */
  readonly spec?: VirtualServiceSpec;
  /** Requests to the host are redirected to HTTPS (`tls.httpsRedirect` of the server exposing it). */
  readonly httpsRedirect?: boolean;
}

/** Server protocols served as opaque TCP. */
const TCP_PROTOCOLS = new Set(["TCP", "MONGO", "MYSQL", "REDIS"]);

const bareHost = (host: string) => host.includes("/") ? host.slice(host.indexOf("/") + 1) : host;

/** The listeners of a gateway proxy: ports of the servers of every Gateway selecting it, merged by port. */
export function planGatewayListeners(
  proxy: Proxy,
  push: PushContext,
): { plans: GatewayListenerPlan[]; dependsOn: string[] } {
  const byPort = new Map<number, { bind: string; servers: GatewayServerPlan[] }>();
  const dependsOn: string[] = [];
  for (const gateway of push.gatewaysFor(proxy)) {
    dependsOn.push(configKey("Gateway", gateway.resource.meta.namespace, gateway.resource.meta.name));
    for (const [i, server] of gateway.resource.spec.servers.entries()) {
      const base = serverPlan(server, gateway.name, i);
      if (base === undefined) continue;
      const plan = base.l4 === undefined
        ? base
        : withL4Routes(base, server, proxy, push, gateway.name, dependsOn);
      if (plan === undefined) continue;
      const entry = byPort.get(server.port.number) ?? { bind: server.bind ?? "0.0.0.0", servers: [] };
      entry.servers.push(plan);
      byPort.set(server.port.number, entry);
    }
  }
  const telemetry = listenerTelemetry(proxy, push);
  return {
    plans: [...byPort.keys()].sort((a, b) => a - b).map((port) => ({
      port,
      ...byPort.get(port)!,
      credentialsFrom: push.secrets !== undefined ? "discovery" as const : "agent" as const,
      telemetry,
    })),
    dependsOn,
  };
}

/** Names a gateway gives itself in `gateways` lists of VirtualService matches. */
function gatewayNamesOf(gateway: string): string[] {
  const [namespace, name] = gateway.split("/");
  return [gateway, name, `${namespace}/${name}`];
}

/**
 * Resolves the forwarding of a TCP or TLS passthrough server from the VirtualServices bound to its gateway;
 * undefined when nothing routes through it (no filter chain is made).
 */
function withL4Routes(
  plan: GatewayServerPlan,
  server: Server,
  proxy: Proxy,
  push: PushContext,
  gateway: string,
  dependsOn: string[],
): GatewayServerPlan | undefined {
  if (plan.l4?.mode === "auto") return plan;
  const port = server.port.number;
  const tcp: WeightedCluster[][] = [];
  const tls: PlannedL4Routes["tls"][number][] = [];
  for (const vs of boundVirtualServices(push, proxy, gateway)) {
    const planned = planGatewayL4Routes(vs, proxy, push, port, gatewayNamesOf(gateway));
    dependsOn.push(...planned.dependsOn);
    // The VirtualService's hosts and the server's must meet (either may be the wider wildcard).
    const meets = (host: string) => plan.hosts.some((h) => hostSubsetOf(host, h) || hostSubsetOf(h, host));
    if (!vs.hosts.some(meets)) continue;
    tcp.push(...planned.tcp.map((r) => [...r.clusters]));
    for (const route of planned.tls) {
      const exposed = route.sniHosts.filter((sni) =>
        plan.hosts.some((h) => h === "*" || hostSubsetOf(sni, h))
      );
      if (exposed.length > 0) tls.push({ sniHosts: exposed, clusters: route.clusters });
    }
  }
  if (plan.l4?.mode === "tcp") {
    return tcp.length > 0 ? { ...plan, l4: { mode: "tcp", clusters: tcp[0] } } : undefined;
  }
  return tls.length > 0 ? { ...plan, l4: { mode: "passthrough", routes: tls } } : undefined;
}

function serverPlan(server: Server, gateway: string, index: number): GatewayServerPlan | undefined {
  const protocol = (server.port.protocol ?? "").toUpperCase();
  const hosts = server.hosts.map(bareHost);
  const name = server.name ?? `${gateway.replace("/", "-")}-${index}`;
  if (protocol === "HTTP" || protocol === "HTTP2" || protocol === "GRPC") {
    return {
      routeName: `http.${server.port.number}`,
      hosts,
      ...(server.tls?.httpsRedirect ? { httpsRedirect: true } : {}),
    };
  }
  const tlsMode = server.tls?.mode;
  if ((protocol === "TLS" || protocol === "HTTPS") && tlsMode === "PASSTHROUGH") {
    return { routeName: `tls.${server.port.number}.${name}`, hosts, l4: { mode: "passthrough", routes: [] } };
  }
  if (protocol === "TLS" && tlsMode === "AUTO_PASSTHROUGH") {
    return { routeName: `tls.${server.port.number}.${name}`, hosts, l4: { mode: "auto" } };
  }
  const tls = terminatedTls(server.tls);
  if (TCP_PROTOCOLS.has(protocol) || (protocol === "TLS" && tls !== undefined)) {
    if (protocol === "TLS" && tls === undefined) return undefined;
    return {
      routeName: `tcp.${server.port.number}.${name}`,
      hosts,
      ...(protocol === "TLS" && tls !== undefined ? { tls } : {}),
      l4: { mode: "tcp", clusters: [] },
    };
  }
  if (protocol === "HTTPS" && tls !== undefined) {
    return { routeName: `https.${server.port.number}.${name}`, hosts, tls };
  }
  return undefined;
}

/**
 * How a server's TLS settings terminate: SIMPLE and MUTUAL need a `credentialName` (undefined without one, as
 * file paths on the gateway are not served); ISTIO_MUTUAL/MESH_MUTUAL use the mesh's certificates.
 */
function terminatedTls(tls: Server["tls"]): GatewayTlsPlan | undefined {
  if (isMeshMutual(tls?.mode)) return { mode: "MESH_MUTUAL" };
  if (tls?.mode !== "SIMPLE" && tls?.mode !== "MUTUAL") return undefined;
  const credentialName = tls.credentialName ?? "";
  return credentialName === "" ? undefined : { mode: tls.mode, credentialName };
}

/** VirtualServices bound to `gateway` (`namespace/name`), by full or short name from the gateway's namespace. */
function boundVirtualServices(push: PushContext, proxy: Proxy, gateway: string): IndexedVirtualService[] {
  const [namespace, name] = gateway.split("/");
  const shortBound = push.virtualServicesFor(proxy, name).filter((vs) =>
    vs.resource.meta.namespace === namespace
  );
  return [...new Set([...push.virtualServicesFor(proxy, gateway), ...shortBound])];
}

/** A server of a Gateway selecting a gateway proxy, with its plan. */
interface RoutedServer {
  readonly gateway: IndexedGateway;
  readonly plan: GatewayServerPlan;
}

/** The VirtualServices bound to one Gateway, in binding order, with where each exact host is claimed. */
interface BoundVirtualServices {
  readonly list: readonly IndexedVirtualService[];
  /** Positions in `list` of the VirtualServices claiming each host that is not a wildcard. */
  readonly byExactHost: ReadonlyMap<string, readonly number[]>;
  /** Positions in `list` of the VirtualServices claiming a wildcard host. */
  readonly withWildcard: readonly number[];
}

/**
 * The servers and bound VirtualServices of the Gateways selecting a gateway proxy, read once for a request that
 * plans many route configurations: each then reads only its own servers and the VirtualServices that may
 * claim their hosts, not every server and VirtualService of the gateway.
 */
export class GatewayRoutes {
  readonly #byRoute = new Map<string, RoutedServer[]>();
  readonly #bound = new Map<string, BoundVirtualServices>();

  /** Reads the servers of the Gateways selecting `proxy` in `push`. */
  constructor(readonly proxy: Proxy, readonly push: PushContext) {
    for (const gateway of push.gatewaysFor(proxy)) {
      for (const [i, server] of gateway.resource.spec.servers.entries()) {
        const plan = serverPlan(server, gateway.name, i);
        if (plan === undefined) continue;
        const servers = this.#byRoute.get(plan.routeName);
        if (servers === undefined) this.#byRoute.set(plan.routeName, [{ gateway, plan }]);
        else servers.push({ gateway, plan });
      }
    }
  }

  /** The servers naming route configuration `routeName`, in Gateway then server order. */
  servers(routeName: string): readonly RoutedServer[] {
    return this.#byRoute.get(routeName) ?? [];
  }

  /**
   * The VirtualServices bound to `gateway` that may claim one of `hosts`, in binding order: those claiming one
   * of them exactly or a wildcard, every one when a host is a wildcard.
   */
  candidates(gateway: string, hosts: readonly string[]): IndexedVirtualService[] {
    const bound = this.#boundTo(gateway);
    if (hosts.some(isWildcardHost)) return [...bound.list];
    const positions = new Set(bound.withWildcard);
    for (const host of hosts) for (const i of bound.byExactHost.get(host) ?? []) positions.add(i);
    return [...positions].sort((a, b) => a - b).map((i) => bound.list[i]);
  }

  #boundTo(gateway: string): BoundVirtualServices {
    let bound = this.#bound.get(gateway);
    if (bound === undefined) {
      const list = boundVirtualServices(this.push, this.proxy, gateway);
      const byExactHost = new Map<string, number[]>();
      const withWildcard: number[] = [];
      list.forEach((vs, i) => {
        if (vs.hosts.some(isWildcardHost)) withWildcard.push(i);
        for (const host of new Set(vs.hosts)) {
          if (isWildcardHost(host)) continue;
          const at = byExactHost.get(host);
          if (at === undefined) byExactHost.set(host, [i]);
          else at.push(i);
        }
      });
      bound = { list, byExactHost, withWildcard };
      this.#bound.set(gateway, bound);
    }
    return bound;
  }
}

/**
 * The virtual hosts of the route configuration `routeName` of a gateway proxy: each host of each bound
 * VirtualService that a server with that route name exposes, with the VirtualService's routes. `routes` is the
 * proxy's {@link GatewayRoutes}, shared by the route configurations of one request.
 */
export function planGatewayRouteConfig(
  proxy: Proxy,
  push: PushContext,
  routeName: string,
  routes: GatewayRoutes = new GatewayRoutes(proxy, push),
): { hosts: GatewayVirtualHost[]; port: number; dependsOn: string[] } | undefined {
  const port = Number(routeName.split(".")[1]);
  const hosts: GatewayVirtualHost[] = [];
  const dependsOn: string[] = [];
  const seen = new Set<string>();
  const servers = routes.servers(routeName);
  for (const { gateway, plan } of servers) {
    dependsOn.push(configKey("Gateway", gateway.resource.meta.namespace, gateway.resource.meta.name));
    // A VirtualService exposing no host here adds nothing, so it is no dependency either: a change that
    // exposes one changes the hosts, and with them the configuration's cache key.
    for (const vs of routes.candidates(gateway.name, plan.hosts)) {
      const exposed = vs.hosts.filter((host) =>
        !seen.has(host) && plan.hosts.some((h) => h === "*" || hostSubsetOf(host, h))
      );
      if (exposed.length === 0) continue;
      const planned = planGatewayRoutes(vs, proxy, push, port, gatewayNamesOf(gateway.name));
      dependsOn.push(...planned.dependsOn);
      if (planned.routes.length === 0) continue;
      for (const host of exposed) {
        if (seen.has(host)) continue;
        seen.add(host);
        hosts.push({
          host,
          routes: planned.routes,
          virtualService: virtualServiceFingerprint(vs, push),
          spec: vs.resource.spec,
          ...(plan.httpsRedirect ? { httpsRedirect: true } : {}),
        });
      }
    }
  }
  // A redirecting server's hosts redirect even when no VirtualService routes them.
  for (const { plan } of servers) {
    if (!plan.httpsRedirect) continue;
    for (const host of plan.hosts) {
      if (seen.has(host)) continue;
      seen.add(host);
      hosts.push({ host, routes: [], virtualService: "", httpsRedirect: true });
    }
  }
  return Number.isInteger(port) ? { hosts, port, dependsOn: [...new Set(dependsOn)] } : undefined;
}
