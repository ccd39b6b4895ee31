import { KINDS, type MeshKind } from "@mesh/shared/config/kinds";
import type { Resource } from "@mesh/shared/config/resource";
import type { ConfigStore } from "../model/config_store.ts";
import {
  type AnalysisInput,
  type AnalysisMeshNetworks,
  MemoryOrchestratorObjects,
  ORCH_KINDS,
  type OrchestratorObjects,
} from "./analysis_input.ts";

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
 * The input of one run: the config store's resources of every kind and the orchestrator's objects, listed at
 * once when the run starts so the analyzers see one state even when either changes between slices.
 */
export function storeAnalysisInput(sources: StoreAnalysisSources): AnalysisInput {
  const lists = new Map<MeshKind, readonly Resource[]>(
    KINDS.map((k) => [k.kind, sources.store.list(k.kind)]),
  );
  const orchestrator = sources.orchestrator;
  return {
    mesh: (kind: MeshKind) => lists.get(kind) ?? [],
    ...(orchestrator
      ? { orchestrator: new MemoryOrchestratorObjects(ORCH_KINDS.flatMap((kind) => orchestrator.list(kind))) }
      : {}),
    rootNamespace: sources.rootNamespace(),
    systemNamespace: sources.systemNamespace,
    meshNetworks: sources.meshNetworks(),
  };
}
