/**
 * Starts the DNS proxy from the agent's settings: `MESH_DNS_PROXY_PORT`, the upstreams and search domains of
 * `MESH_DNS_RESOLV_CONF`, and the workload's namespace and domain.
 *
 * @module
 */
import type { EnvSettings } from "@mesh/shared/env/env_settings";
import type { Logger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import { DnsProxy } from "./dns_proxy.ts";
import { parseResolvConf } from "./resolv_conf.ts";

/** What the DNS proxy needs besides the settings. */
export interface DnsProxyInputs {
  readonly env: EnvSettings;
  /** The workload's namespace. */
  readonly namespace: string;
  /** The workload's DNS domain, e.g. `shop.svc.cluster.local`. */
  readonly domain: string;
  readonly log: Logger;
  readonly metrics: Metrics;
}

/**
 * Reads resolv.conf and starts listening.
 *
 * @throws {Error} when resolv.conf cannot be read or the port is taken, naming the file or address
 */
export async function startDnsProxy(inputs: DnsProxyInputs): Promise<DnsProxy> {
  const path = inputs.env.string("MESH_DNS_RESOLV_CONF");
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    throw new Error(`MESH_DNS_RESOLV_CONF: cannot read ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const conf = parseResolvConf(text);
  if (conf.servers.length === 0) {
    inputs.log.warn("resolv.conf names no name server; names outside the mesh get SERVFAIL", { path });
  }
  const proxy = new DnsProxy({
    scope: { namespace: inputs.namespace, domain: inputs.domain, search: conf.search },
    upstreams: conf.servers,
    port: inputs.env.int("MESH_DNS_PROXY_PORT"),
    log: inputs.log,
    metrics: inputs.metrics,
  });
  await proxy.start();
  return proxy;
}
