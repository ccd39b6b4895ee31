/**
 * What analysis reads: the mesh resources of the config store and, when an orchestrator is read, the
 * orchestrator objects some analyzers need (namespaces, pods, services, deployments, secrets, config maps,
 * custom resource definitions). File mode passes mesh resources only.
 * @module
 */
import type { Resource } from "@mesh/shared/config/resource";
import type { MeshKind } from "@mesh/shared/config/kinds";

export { ORCH_KINDS, type OrchKind, type OrchObject, type OrchObjectMeta } from "../model/orch_object.ts";
import type { OrchKind, OrchObject } from "../model/orch_object.ts";

/** The orchestrator objects of one analysis run, by kind. */
export interface OrchestratorObjects {
  /** Every object of a kind, in any order. */
  list(kind: OrchKind): readonly OrchObject[];
}

/** One network endpoint of the mesh networks: where a network's endpoints come from. */
export interface MeshNetworkEndpoint {
  readonly fromRegistry?: string;
  readonly fromCidr?: string;
}

/** The mesh networks, as analysis reads them. */
export interface AnalysisMeshNetworks {
  readonly networks?: Readonly<Record<string, { readonly endpoints?: readonly MeshNetworkEndpoint[] }>>;
}

/** Everything one analysis run reads. */
export interface AnalysisInput {
  /** Mesh resources of a kind, in any order. */
  mesh(kind: MeshKind): readonly Resource[];
  /** Orchestrator objects; absent in file mode, where analyzers that need them do not run. */
  readonly orchestrator?: OrchestratorObjects;
  /** The mesh config's `rootNamespace`. */
  readonly rootNamespace: string;
  /** The namespace of the control plane: the MeshNetworks resource's namespace in messages. */
  readonly systemNamespace: string;
  /** The mesh networks in effect. */
  readonly meshNetworks: AnalysisMeshNetworks;
}

/** Orchestrator objects held in memory, such as a test's fixtures. */
export class MemoryOrchestratorObjects implements OrchestratorObjects {
  readonly #byKind = new Map<OrchKind, OrchObject[]>();

  /** Holds `objects`, grouped by kind. */
  constructor(objects: Iterable<OrchObject> = []) {
    for (const object of objects) this.add(object);
  }

  /** Adds one object. */
  add(object: OrchObject): void {
    const list = this.#byKind.get(object.kind) ?? [];
    list.push(object);
    this.#byKind.set(object.kind, list);
  }

  list(kind: OrchKind): readonly OrchObject[] {
    return this.#byKind.get(kind) ?? [];
  }
}
