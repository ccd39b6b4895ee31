/**
 * A Sidecar's `ingress` listeners: when a workload's Sidecar declares them, they replace the inbound ports
 * found from the services the workload backs. Each port is served to `defaultEndpoint`: `127.0.0.1:<port>`
 * (loopback), `0.0.0.0:<port>` (the workload's own address) or `unix://<path>` (a Unix socket).
 *
 * @module
 */
import { parseProtocol } from "@mesh/shared/config/validation/ports";
import type { Proxy } from "../../model/proxy.ts";
import type { ServicePort } from "../../model/service.ts";
import type { PushContext } from "../../push/push_context.ts";

/** One declared inbound port and where its traffic goes. */
export interface IngressPort {
  readonly port: number;
  readonly protocol: ServicePort["protocol"];
  /** An IP and port, or a Unix socket path. */
  readonly endpoint: { readonly address: string; readonly port: number } | { readonly pipe: string };
}

/**
 * The ingress ports of the proxy's Sidecar; undefined when it declares none (inbound ports then come from the
 * services). A `defaultEndpoint` that cannot be read is left out (validation rejects such Sidecars).
 */
export function sidecarIngressPorts(proxy: Proxy, push: PushContext): IngressPort[] | undefined {
  const ingress = push.sidecarScope(proxy).ingress;
  if (ingress.length === 0) return undefined;
  const out: IngressPort[] = [];
  for (const listener of ingress) {
    const protocol =
      (parseProtocol(listener.port.protocol ?? "") ?? "Unsupported") as ServicePort["protocol"];
    const target = listener.defaultEndpoint;
    if (target.startsWith("unix://")) {
      out.push({ port: listener.port.number, protocol, endpoint: { pipe: target.slice("unix://".length) } });
      continue;
    }
    const colon = target.lastIndexOf(":");
    const host = target.slice(0, colon);
    const port = Number(target.slice(colon + 1));
    if (colon < 0 || !Number.isInteger(port) || port < 1) continue;
    const address = host === "0.0.0.0" ? proxy.ipAddresses[0] ?? "127.0.0.1" : host;
    out.push({ port: listener.port.number, protocol, endpoint: { address, port } });
  }
  return out;
}
