/**
 * The answers the DNS proxy gives from the name table, built once per table the discovery server sends and
 * then only read: a new table replaces the whole object, so an answer never mixes two tables. As in Istio
 * 1.9, each host answers under its name and, for orchestrator services of the proxy's domain, under
 * `name.namespace`, `name.namespace.svc` and (same namespace) `name`; each of those names with the first search
 * domain appended (what a resolver tries first for a name with fewer dots than `ndots`) is a CNAME to it.
 *
 * @module
 */
import { isIP } from "node:net";
import type { NameTable } from "@mesh/proto/name_table";
import { DNS_CLASS_IN, DNS_TYPE, type DnsRecord } from "./dns_message.ts";

/** The TTL of every answer from the table, Istio's. */
export const TABLE_TTL_SECONDS = 30;

/** Where the proxy's workload lives, for the short forms of orchestrator hosts. */
export interface LookupScope {
  /** The workload's namespace. */
  readonly namespace: string;
  /** The workload's DNS domain, e.g. `shop.svc.cluster.local`. */
  readonly domain: string;
  /** Search domains of the workload's resolv.conf. */
  readonly search: readonly string[];
}

const ORCHESTRATOR_REGISTRIES: ReadonlySet<string> = new Set(["Orchestrator", "Kubernetes"]);

/** Answers of A and AAAA queries for the hosts of one name table. */
export class LookupTable {
  readonly #hosts = new Set<string>();
  readonly #v4 = new Map<string, DnsRecord[]>();
  readonly #v6 = new Map<string, DnsRecord[]>();
  readonly #cname = new Map<string, DnsRecord>();
  /** The CNAME and its target's addresses, by family, per search-domain name: one list per answer. */
  readonly #chain4 = new Map<string, readonly DnsRecord[]>();
  readonly #chain6 = new Map<string, readonly DnsRecord[]>();

  /** Builds the answers of `table` for a workload in `scope`; addresses that are not IPs are left out. */
  constructor(table: NameTable, scope: LookupScope) {
    const parts = scope.domain.split(".");
    if (parts[0] === scope.namespace) parts.shift();
    const domain = parts.join(".");
    const firstSearch = scope.search[0];
    for (const [host, info] of Object.entries(table)) {
      const v4 = info.ips.filter((ip) => isIP(ip) === 4);
      const v6 = info.ips.filter((ip) => isIP(ip) === 6);
      if (v4.length === 0 && v6.length === 0) continue;
      const names = new Set([`${host}.`]);
      if (ORCHESTRATOR_REGISTRIES.has(info.registry) && domain !== "" && host.endsWith(domain)) {
        names.add(`${info.shortname}.${info.namespace}.`);
        if (info.namespace === scope.namespace) names.add(`${info.shortname}.`);
        names.add(`${info.shortname}.${info.namespace}.${parts[0]}.`);
      }
      for (const raw of names) {
        const name = raw.toLowerCase();
        this.#hosts.add(name);
        if (v4.length > 0) this.#v4.set(name, v4.map((ip) => record(name, DNS_TYPE.A, ip)));
        if (v6.length > 0) this.#v6.set(name, v6.map((ip) => record(name, DNS_TYPE.AAAA, ip)));
        if (firstSearch === undefined) continue;
        const expanded = `${name}${firstSearch.toLowerCase()}.`;
        if (!names.has(expanded)) {
          const cname = record(expanded, DNS_TYPE.CNAME, name);
          this.#cname.set(expanded, cname);
          this.#hosts.add(expanded);
          const v4Records = this.#v4.get(name), v6Records = this.#v6.get(name);
          if (v4Records) this.#chain4.set(expanded, [cname, ...v4Records]);
          if (v6Records) this.#chain6.set(expanded, [cname, ...v6Records]);
        }
      }
    }
  }

  /** How many names the table answers for. */
  get size(): number {
    return this.#hosts.size;
  }

  /**
   * The answers for a query, or undefined when the table does not know the name or the type is not A or AAAA
   * (the query then goes upstream). An empty list is a known name without an address of that family.
   */
  lookup(type: number, name: string): readonly DnsRecord[] | undefined {
    if (!this.#hosts.has(name) || (type !== DNS_TYPE.A && type !== DNS_TYPE.AAAA)) return undefined;
    const byName = this.#cname.has(name)
      ? (type === DNS_TYPE.A ? this.#chain4 : this.#chain6)
      : (type === DNS_TYPE.A ? this.#v4 : this.#v6);
    return byName.get(name) ?? [];
  }
}

function record(name: string, type: number, data: string): DnsRecord {
  return { name, type, class: DNS_CLASS_IN, ttl: TABLE_TTL_SECONDS, data };
}
