import { KINDS, type MeshKind } from "../../shared/config/kinds.ts";
import type { Resource } from "../../shared/config/resource.ts";
import type { ConfigStore } from "../model/config_store.ts";
import type { AnalysisInput, AnalysisMeshNetworks, OrchestratorObjects } from "./analysis_input.ts";

/** What {@link storeAnalysisInput} reads. */
export interface StoreAnalysisSources {
  readonly store: ConfigStore;
  /** The mesh config's root namespace in effect. */
  readonly rootNamespace: () => string;
  /** `--namespace`: the control plane's namespace. */
  readonly systemNamespace: string;
  /** The mesh networks in effect. */
  readonly meshNetworks: () => AnalysisMeshNetworks;
  /** The orchestrator's objects, when one is read; absent in file mode. */
  readonly orchestrator?: OrchestratorObjects;
}

/**
 * The input of one run: the config store's resources of every kind, listed at once when the run starts so the
 * analyzers see one state even when the store changes between slices.
 */
export function storeAnalysisInput(sources: StoreAnalysisSources): AnalysisInput {
  const lists = new Map<MeshKind, readonly Resource[]>(
    KINDS.map((k) => [k.kind, sources.store.list(k.kind)]),
  );
  return {
    mesh: (kind: MeshKind) => lists.get(kind) ?? [],
    ...(sources.orchestrator ? { orchestrator: sources.orchestrator } : {}),
    rootNamespace: sources.rootNamespace(),
    systemNamespace: sources.systemNamespace,
    meshNetworks: sources.meshNetworks(),
  };
}
