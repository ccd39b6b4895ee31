/**
 * The analyzer contract: an analyzer reads one run's input through an {@link AnalysisContext} and reports
 * messages about the resources it reads. `analyze` yields after each resource so the runner can cut a long run
 * into event-loop slices.
 * @module
 */
import type { Resource } from "@mesh/shared/config/resource";
import type { MeshKind } from "@mesh/shared/config/kinds";
import type { AnalysisInput, OrchKind, OrchObject } from "./analysis_input.ts";
import type { AnalysisMessage, MessageArg, MessageOrigin, MessageType } from "./analysis_message.ts";
import { newMessage } from "./analysis_message.ts";

/** One of the reference's analyzers. */
export interface Analyzer {
  /** The reference's name, such as `virtualservice.GatewayAnalyzer`. */
  readonly name: string;
  /** One line on what it checks. */
  readonly description: string;
  /** True when it needs orchestrator objects: file mode does not run it. */
  readonly requiresOrchestrator: boolean;
  /** Reports through `ctx`; yields between resources so the caller may pause. */
  analyze(ctx: AnalysisContext): Iterable<void>;
}

/** The origin of a mesh resource in messages. */
export function meshOrigin(resource: Resource): MessageOrigin {
  return { kind: resource.gvk.kind, namespace: resource.meta.namespace, name: resource.meta.name };
}

/** The origin of an orchestrator object in messages (namespace empty when it has none). */
export function orchOrigin(object: OrchObject): MessageOrigin {
  return { kind: object.kind, namespace: object.metadata.namespace ?? "", name: object.metadata.name };
}

/** What an analyzer reads and where it reports, for one run. */
export class AnalysisContext {
  readonly input: AnalysisInput;
  readonly #messages: AnalysisMessage[] = [];
  readonly #mesh = new Map<MeshKind, readonly Resource[]>();

  /** A context over `input`; each kind is read from it once. */
  constructor(input: AnalysisInput) {
    this.input = input;
  }

  /** Mesh resources of a kind. */
  mesh<Spec = Record<string, unknown>>(kind: MeshKind): readonly Resource<Spec>[] {
    let list = this.#mesh.get(kind);
    if (list === undefined) {
      list = this.input.mesh(kind);
      this.#mesh.set(kind, list);
    }
    return list as readonly Resource<Spec>[];
  }

  /** Orchestrator objects of a kind; none in file mode. */
  orch(kind: OrchKind): readonly OrchObject[] {
    return this.input.orchestrator?.list(kind) ?? [];
  }

  /** Reports a message of `type` about `origin`. */
  report(type: MessageType, origin: MessageOrigin, ...args: MessageArg[]): void {
    this.#messages.push(newMessage(type, origin, ...args));
  }

  /** Every message reported so far, in report order. */
  messages(): readonly AnalysisMessage[] {
    return this.#messages;
  }
}
