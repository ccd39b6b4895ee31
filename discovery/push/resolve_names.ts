import type { Destination } from "@mesh/shared/config/networking/destination";
import type { VirtualServiceSpec } from "@mesh/shared/config/networking/virtual_service";
import { MESH_GATEWAY } from "@mesh/shared/config/networking/gateway_names";
import { resolveShortName } from "../model/host_match.ts";

/**
 * Resolves a gateway reference of a resource in `namespace` to `namespace/name`, as Istio: `mesh` stays,
 * `./name` and a bare `name` mean the resource's namespace, and the legacy `name.ns.svc.<domain>` becomes `ns/name`.
 */
export function resolveGatewayName(gateway: string, namespace: string): string {
  if (gateway === MESH_GATEWAY) return gateway;
  const slash = gateway.indexOf("/");
  if (slash >= 0) return gateway.startsWith("./") ? `${namespace}/${gateway.slice(2)}` : gateway;
  const dot = gateway.indexOf(".");
  if (dot < 0) return `${namespace}/${gateway}`;
  const rest = gateway.slice(dot + 1);
  const nsEnd = rest.indexOf(".");
  return `${nsEnd < 0 ? rest : rest.slice(0, nsEnd)}/${gateway.slice(0, dot)}`;
}

/**
 * A VirtualService spec with every name resolved for the resource's namespace: top-level hosts and destination
 * hosts as FQDNs (`--domain`), gateways (top-level and in matches) as `namespace/name`, `mesh` by default.
 */
export function resolveVirtualService(
  spec: VirtualServiceSpec,
  namespace: string,
  domain: string,
): VirtualServiceSpec {
  const host = (h: string) => resolveShortName(h, namespace, domain);
  const gateway = (g: string) => resolveGatewayName(g, namespace);
  const destination = (d: Destination): Destination => ({ ...d, host: host(d.host) });
  const gateways = <M extends { gateways?: readonly string[] }>(m: M): M =>
    m.gateways ? { ...m, gateways: m.gateways.map(gateway) } : m;
  const out: Record<string, unknown> = {
    ...spec,
    gateways: (spec.gateways && spec.gateways.length > 0 ? spec.gateways : [MESH_GATEWAY]).map(gateway),
  };
  if (spec.hosts) out.hosts = spec.hosts.map(host);
  if (spec.http) {
    out.http = spec.http.map((r) => ({
      ...r,
      ...(r.match ? { match: r.match.map(gateways) } : {}),
      ...(r.route ? { route: r.route.map((d) => ({ ...d, destination: destination(d.destination) })) } : {}),
      ...(r.mirror ? { mirror: destination(r.mirror) } : {}),
    }));
  }
  for (const field of ["tcp", "tls"] as const) {
    const routes = spec[field];
    if (!routes) continue;
    out[field] = routes.map((r) => ({
      ...r,
      ...(r.match ? { match: r.match.map(gateways) } : {}),
      route: r.route.map((d) => ({ ...d, destination: destination(d.destination) })),
    }));
  }
  return out as unknown as VirtualServiceSpec;
}
