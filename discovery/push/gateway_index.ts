import type { Resource } from "@mesh/shared/config/resource";
import type { GatewaySpec } from "@mesh/shared/config/networking/gateway";
import { compareByCreation, resourceName } from "../model/config_order.ts";
import { selectorMatches } from "../model/labels.ts";
import type { Proxy } from "../model/proxy.ts";

/** A Gateway with its `namespace/name`, the name VirtualServices bind to. */
export interface IndexedGateway {
  /** `namespace/name` of the Gateway. */
  readonly name: string;
  /** The Gateway resource. */
  readonly resource: Resource<GatewaySpec>;
}

/** Gateways, oldest first, found by the workload labels their selector matches. */
export class GatewayIndex {
  /** Every Gateway, oldest first. */
  readonly all: readonly IndexedGateway[];
  readonly #byName: ReadonlyMap<string, IndexedGateway>;

  /**
   * Indexes `resources`, oldest first.
   *
   * @param scopeToNamespace DISCOVERY_SCOPE_GATEWAY_TO_NAMESPACE: a workload sees only its namespace's gateways.
   */
  constructor(resources: readonly Resource[], private readonly scopeToNamespace: boolean) {
    this.all = Object.freeze(
      [...resources].sort(compareByCreation).map((r) =>
        Object.freeze({ name: resourceName(r), resource: r as Resource<GatewaySpec> })
      ),
    );
    this.#byName = new Map(this.all.map((g) => [g.name, g]));
    Object.freeze(this);
  }

  /** Gateways whose selector matches the proxy's labels (an empty selector matches every workload). */
  forProxy(proxy: Proxy): readonly IndexedGateway[] {
    return this.all.filter((g) =>
      (!this.scopeToNamespace || g.resource.meta.namespace === proxy.namespace) &&
      selectorMatches(g.resource.spec.selector, proxy.metadata.labels)
    );
  }

  /** A gateway by `namespace/name`. */
  get(name: string): IndexedGateway | undefined {
    return this.#byName.get(name);
  }
}
