import type { Service } from "../model/service.ts";
import { serviceVisibleFrom } from "../model/service.ts";
import { namespacesSingledOut } from "../model/visibility.ts";
import type { PushProblems } from "./push_problems.ts";

/** The name of the outbound cluster of a service port, as proxies see it. */
export function outboundClusterName(hostname: string, port: number, subset = ""): string {
  return `outbound|${port}|${subset}|${hostname}`;
}

/**
 * The services of a snapshot: one per hostname and namespace (the first the registries report wins; the
 * others are recorded as duplicate proxy clusters), with lookups by hostname and by viewing namespace.
 */
export class ServiceIndex {
  /** Every service, sorted by hostname then namespace. */
  readonly all: readonly Service[];
  readonly #byHostname = new Map<string, Service[]>();
  readonly #visible = new Map<string, readonly Service[]>();
  readonly #singledOut = new Set<string>();

  /** Indexes `services` at once; duplicate hostnames in a namespace are recorded in `problems`. */
  constructor(services: readonly Service[], problems: PushProblems) {
    const kept: Service[] = [];
    const seen = new Map<string, Service>();
    for (const service of services) {
      const key = `${service.namespace}/${service.hostname}`;
      const winner = seen.get(key);
      if (winner) {
        for (const port of service.ports) {
          problems.add(
            "discovery_duplicate_proxy_clusters",
            outboundClusterName(service.hostname, port.port),
            `Hostname "${service.hostname}" in namespace "${service.namespace}" is defined by ` +
              `"${winner.attributes.name}" and "${service.attributes.name}"; "${winner.attributes.name}" is used`,
          );
        }
        continue;
      }
      seen.set(key, service);
      kept.push(service);
      const list = this.#byHostname.get(service.hostname);
      if (list) list.push(service);
      else this.#byHostname.set(service.hostname, [service]);
    }
    this.all = Object.freeze(kept);
    for (const service of kept) {
      for (const ns of namespacesSingledOut(service.exportTo)) this.#singledOut.add(ns);
      // A workload prefers its own namespace's definition of a hostname defined in several.
      const definitions = this.byHostname(service.hostname);
      if (definitions.length > 1) { for (const d of definitions) this.#singledOut.add(d.namespace); }
    }
    Object.freeze(this);
  }

  /**
   * True when workloads of `namespace` may see these services differently from workloads of a namespace that
   * no service names: an exportTo list names it, or it defines a hostname another namespace defines too.
   */
  singlesOut(namespace: string): boolean {
    return this.#singledOut.has(namespace);
  }

  /** The one namespace defining `hostname`; undefined when none or several do. */
  ownerOf(hostname: string): string | undefined {
    const definitions = this.byHostname(hostname);
    return definitions.length === 1 ? definitions[0].namespace : undefined;
  }

  /** Services with this hostname, one per defining namespace. */
  byHostname(hostname: string): readonly Service[] {
    return this.#byHostname.get(hostname) ?? [];
  }

  /** Services visible from `namespace` (exportTo), all namespaces' definitions of a hostname included. */
  visibleFrom(namespace: string): readonly Service[] {
    let out = this.#visible.get(namespace);
    if (!out) {
      out = Object.freeze(this.all.filter((s) => serviceVisibleFrom(s, namespace)));
      this.#visible.set(namespace, out);
    }
    return out;
  }

  /**
   * The definition of `hostname` a workload in `namespace` uses: its own namespace's if visible, else the
   * first visible one (namespaces in name order).
   */
  lookup(hostname: string, namespace: string): Service | undefined {
    const candidates = this.byHostname(hostname).filter((s) => serviceVisibleFrom(s, namespace));
    return candidates.find((s) => s.namespace === namespace) ?? candidates[0];
  }
}

/**
 * One service per hostname from a list that may define a hostname in several namespaces: the definition in
 * `preferredNamespace` wins, else the first. Keeps the input order.
 */
export function uniqueByHostname(services: readonly Service[], preferredNamespace: string): Service[] {
  const chosen = new Map<string, Service>();
  for (const s of services) {
    const current = chosen.get(s.hostname);
    if (!current || (current.namespace !== preferredNamespace && s.namespace === preferredNamespace)) {
      chosen.set(s.hostname, s);
    }
  }
  return services.filter((s) => chosen.get(s.hostname) === s);
}
