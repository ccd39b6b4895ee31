import type { Resource } from "@mesh/shared/config/resource";
import type { VirtualServiceSpec } from "@mesh/shared/config/networking/virtual_service";
import type { HTTPRoute } from "@mesh/shared/config/networking/virtual_service_http";
import { compareByCreation, resourceName } from "../model/config_order.ts";
import { deepFreeze } from "../model/deep_freeze.ts";
import {
  exportedTo,
  exportToOverlaps,
  namespacesSingledOut,
  normalizeExportTo,
} from "../model/visibility.ts";
import type { PushProblems } from "./push_problems.ts";
import { resolveVirtualService } from "./resolve_names.ts";
import { mergeDelegateRoutes } from "./virtual_service_delegate.ts";

/**
 * A VirtualService ready for generators: names resolved (hosts FQDN, gateways `ns/name`, `mesh` by default),
 * delegate routes merged in, visibility normalized. `resource.spec` is the resolved spec.
 */
export interface IndexedVirtualService {
  /** The VirtualService with its spec resolved and delegates merged. */
  readonly resource: Resource<VirtualServiceSpec>;
  /** Hosts as fully qualified names (or wildcards); never empty. */
  readonly hosts: readonly string[];
  /** Gateways as `namespace/name` or `mesh`; `mesh` when the spec names none. */
  readonly gateways: readonly string[];
  /** Namespaces it is visible in, normalized: `.` resolved, sorted, deduplicated; `*` for all. */
  readonly exportTo: readonly string[];
  /** `namespace/name` of the delegates merged into this one: part of what a route built from it depends on. */
  readonly delegates: readonly string[];
}

/** Options of the VirtualService index. */
export interface VirtualServiceIndexOptions {
  readonly domain: string;
  /** Mesh `defaultVirtualServiceExportTo`. */
  readonly defaultExportTo: readonly string[];
  /** DISCOVERY_ENABLE_VIRTUAL_SERVICE_DELEGATE; when false, roots and delegates are both ignored. */
  readonly enableDelegates: boolean;
}

/** VirtualServices by gateway, oldest first, with delegates merged and conflicting domains reported. */
export class VirtualServiceIndex {
  /** Every usable VirtualService (delegates themselves excluded), oldest first. */
  readonly all: readonly IndexedVirtualService[];
  readonly #byGateway = new Map<string, IndexedVirtualService[]>();
  readonly #singledOut = new Set<string>();

  /**
   * Resolves, merges and indexes `resources` at once; problems such as conflicting domains go to `problems`.
   */
  constructor(resources: readonly Resource[], options: VirtualServiceIndexOptions, problems: PushProblems) {
    const resolved = [...resources].sort(compareByCreation).map((r) => {
      const vs = r as Resource<VirtualServiceSpec>;
      return { ...vs, spec: resolveVirtualService(vs.spec, vs.meta.namespace, options.domain) };
    });
    const delegates = new Map<string, Resource<VirtualServiceSpec>>();
    for (const vs of resolved) {
      if ((vs.spec.hosts ?? []).length === 0) delegates.set(resourceName(vs), vs);
    }
    const out: IndexedVirtualService[] = [];
    for (const vs of resolved) {
      if ((vs.spec.hosts ?? []).length === 0) continue;
      const isRoot = (vs.spec.http ?? []).some((r) => r.delegate);
      if (isRoot && !options.enableDelegates) continue;
      const used: string[] = [];
      const spec = isRoot ? this.#mergeDelegates(vs, delegates, options, used) : vs.spec;
      out.push(deepFreeze({
        resource: { ...vs, spec },
        hosts: spec.hosts ?? [],
        gateways: spec.gateways ?? [],
        exportTo: normalizeExportTo(vs.spec.exportTo ?? options.defaultExportTo, vs.meta.namespace),
        delegates: used,
      }));
    }
    this.all = Object.freeze(out);
    for (const vs of out) {
      for (const gateway of vs.gateways) {
        const list = this.#byGateway.get(gateway);
        if (list) list.push(vs);
        else this.#byGateway.set(gateway, [vs]);
      }
      for (const ns of namespacesSingledOut(vs.exportTo)) this.#singledOut.add(ns);
      collectSourceNamespaces(vs.resource.spec, this.#singledOut);
    }
    this.#reportDuplicateDomains(problems);
    Object.freeze(this);
  }

  /**
   * True when workloads of `namespace` may see these VirtualServices differently from workloads of a
   * namespace that none names: an exportTo list or a match's `sourceNamespace` names it.
   */
  singlesOut(namespace: string): boolean {
    return this.#singledOut.has(namespace);
  }

  /** VirtualServices bound to `gateway` (`mesh` or `namespace/name`) and visible from `namespace`. */
  forGateway(gateway: string, namespace: string): readonly IndexedVirtualService[] {
    return (this.#byGateway.get(gateway) ?? []).filter((vs) => exportedTo(vs.exportTo, namespace));
  }

  /** The gateways some VirtualService binds to, sorted. */
  gateways(): readonly string[] {
    return [...this.#byGateway.keys()].sort();
  }

  #mergeDelegates(
    root: Resource<VirtualServiceSpec>,
    delegates: ReadonlyMap<string, Resource<VirtualServiceSpec>>,
    options: VirtualServiceIndexOptions,
    used: string[],
  ): VirtualServiceSpec {
    const http: HTTPRoute[] = [];
    for (const route of root.spec.http ?? []) {
      if (!route.delegate) {
        http.push(route);
        continue;
      }
      const key = `${route.delegate.namespace || root.meta.namespace}/${route.delegate.name}`;
      const delegate = delegates.get(key);
      // A missing or invisible delegate drops only this route, as in Istio.
      if (!delegate) continue;
      const exportTo = normalizeExportTo(
        delegate.spec.exportTo ?? options.defaultExportTo,
        delegate.meta.namespace,
      );
      if (!exportedTo(exportTo, root.meta.namespace)) continue;
      used.push(key);
      http.push(...mergeDelegateRoutes(route, delegate.spec.http ?? []));
    }
    return { ...root.spec, http };
  }

  /** Two visible VirtualServices on one gateway claiming one host give proxies a duplicate domain. */
  #reportDuplicateDomains(problems: PushProblems): void {
    for (const [gateway, list] of this.#byGateway) {
      const claims: { host: string; vs: IndexedVirtualService }[] = [];
      for (const vs of list) {
        for (const host of vs.hosts) {
          const earlier = claims.find((c) =>
            c.vs !== vs && c.host === host && exportToOverlaps(c.vs.exportTo, vs.exportTo)
          );
          if (earlier) {
            problems.add(
              "discovery_vservice_dup_domain",
              host,
              `Host "${host}" on gateway "${gateway}" is claimed by VirtualServices ` +
                `"${resourceName(earlier.vs.resource)}" and "${
                  resourceName(vs.resource)
                }"; the first is used`,
            );
          }
          claims.push({ host, vs });
        }
      }
    }
  }
}

/** Adds every `sourceNamespace` of the matches in `spec` (HTTP, TCP and TLS routes) to `out`. */
function collectSourceNamespaces(spec: VirtualServiceSpec, out: Set<string>): void {
  for (const routes of [spec.http, spec.tcp, spec.tls]) {
    for (const route of routes ?? []) {
      for (const match of route.match ?? []) {
        if (match.sourceNamespace) out.add(match.sourceNamespace);
      }
    }
  }
}
