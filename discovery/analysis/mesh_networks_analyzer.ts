import type { AnalysisContext, Analyzer } from "./analyzer.ts";
import { MESSAGES } from "./analysis_message.ts";

/** The registries every server knows, by the names `--registries` takes. */
const BUILT_IN_REGISTRIES: readonly string[] = ["Mock", "Orchestrator", "External"];
/** The label of the Secrets that hold remote clusters' credentials, one cluster per data key. */
const MULTI_CLUSTER_LABEL = "mesh/multiCluster";

/**
 * Mesh networks endpoints whose `fromRegistry` names no known registry: a built-in one or a remote cluster of
 * a Secret labelled for multi-cluster (IST0126, on the MeshNetworks resource). Without orchestrator objects
 * only the built-in registries are known.
 */
export const meshNetworksAnalyzer: Analyzer = {
  name: "meshnetworks.MeshNetworksAnalyzer",
  description: "Check the validity of MeshNetworks in the cluster",
  requiresOrchestrator: false,
  *analyze(ctx: AnalysisContext) {
    const known = new Set(BUILT_IN_REGISTRIES);
    for (const secret of ctx.orch("Secret")) {
      if (secret.metadata.labels?.[MULTI_CLUSTER_LABEL] !== "true") continue;
      for (const cluster of Object.keys(secret.data ?? {})) known.add(cluster);
    }
    yield;
    const origin = { kind: "MeshNetworks", namespace: ctx.input.systemNamespace, name: "meshnetworks" };
    for (const [network, spec] of Object.entries(ctx.input.meshNetworks.networks ?? {})) {
      for (const endpoint of spec.endpoints ?? []) {
        const registry = endpoint.fromRegistry;
        if (registry === undefined || known.has(registry)) continue;
        ctx.report(MESSAGES.UnknownMeshNetworksServiceRegistry, origin, registry, network);
      }
    }
  },
};
