/**
 * Loads inputs in the shape of the reference's analyzer tests (multi-document YAML of mesh resources and
 * orchestrator objects) into an {@link AnalysisInput}: mesh kinds as resources, exactly as written (no
 * validation, no default namespace: the reference's analysis harness decodes without either), orchestrator
 * kinds into memory, other kinds skipped.
 * @module
 */
import type { Resource } from "@mesh/shared/config/resource";
import { canonicalGroup, findKind, type MeshKind } from "@mesh/shared/config/kinds";
import { parseYamlDocuments } from "@mesh/shared/config/mesh/yaml_documents";
import {
  type AnalysisInput,
  type AnalysisMeshNetworks,
  MemoryOrchestratorObjects,
  ORCH_KINDS,
  type OrchKind,
  type OrchObject,
} from "./analysis_input.ts";

const ORCH_KIND_NAMES: ReadonlySet<string> = new Set<string>(ORCH_KINDS);

/** Resources and objects read from YAML texts. */
export class CorpusInput {
  readonly resources: Resource[] = [];
  readonly orchestrator = new MemoryOrchestratorObjects();

  /** Adds every document of `text`. */
  addYaml(text: string): this {
    const stream = parseYamlDocuments(text);
    if (stream.errors.length > 0) {
      throw new SyntaxError(
        `YAML does not parse: line ${stream.errors[0].line}: ${stream.errors[0].message}`,
      );
    }
    for (const doc of stream.documents) this.#add(doc.value as Record<string, unknown>);
    return this;
  }

  #add(doc: Record<string, unknown>): void {
    const kind = String(doc.kind ?? "");
    const metadata = (doc.metadata ?? {}) as OrchObject["metadata"];
    if (ORCH_KIND_NAMES.has(kind)) {
      this.orchestrator.add({ ...doc, kind: kind as OrchKind, metadata } as OrchObject);
      return;
    }
    const [group, version] = String(doc.apiVersion ?? "").split("/");
    const canonical = canonicalGroup(group);
    const info = canonical ? findKind(canonical, kind) : undefined;
    if (!info) return;
    this.resources.push({
      gvk: { group: info.group, version, kind: info.kind },
      meta: { ...metadata, namespace: metadata.namespace ?? "" },
      spec: doc.spec ?? {},
    });
  }

  /** The analysis input over what was added. */
  input(options: {
    rootNamespace: string;
    systemNamespace: string;
    meshNetworks?: AnalysisMeshNetworks;
    withOrchestrator?: boolean;
  }): AnalysisInput {
    const resources = this.resources;
    return {
      mesh: (kind: MeshKind) => resources.filter((r) => r.gvk.kind === kind),
      ...(options.withOrchestrator === false ? {} : { orchestrator: this.orchestrator }),
      rootNamespace: options.rootNamespace,
      systemNamespace: options.systemNamespace,
      meshNetworks: options.meshNetworks ?? { networks: {} },
    };
  }
}
