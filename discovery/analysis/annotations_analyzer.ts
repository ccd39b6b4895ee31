import { type AnalysisContext, type Analyzer, orchOrigin } from "./analyzer.ts";
import type { OrchKind } from "./analysis_input.ts";
import { MESSAGES } from "./analysis_message.ts";
import { KNOWN_ANNOTATIONS } from "./known_annotations.ts";

/** Checks one annotation's value as the injector would; a message when it is refused. */
export type AnnotationValidator = (name: string, value: string) => string | undefined;

const KINDS: readonly OrchKind[] = ["Namespace", "Service", "Pod", "Deployment"];

/** True for annotations of the mesh's domains (the part before `/` ends in `mesh.io`), and the ingress class. */
function meshAnnotation(name: string): boolean {
  return name === "kubernetes.io/ingress.class" || name.split("/")[0].endsWith("mesh.io");
}

/**
 * Annotations of the mesh's domains on Namespaces, Services, Pods and Deployments that are unknown (IST0108),
 * deprecated (IST0135), set on a kind they do not apply to (IST0107), or whose value `validate` refuses
 * (IST0125).
 */
export function annotationsAnalyzer(validate: AnnotationValidator = () => undefined): Analyzer {
  return {
    name: "annotations.K8sAnalyzer",
    description: "Checks for misplaced and invalid Mesh annotations in Orchestrator resources",
    requiresOrchestrator: true,
    *analyze(ctx: AnalysisContext) {
      for (const kind of KINDS) {
        for (const object of ctx.orch(kind)) {
          for (const [name, value] of Object.entries(object.metadata.annotations ?? {})) {
            if (!meshAnnotation(name)) continue;
            const known = KNOWN_ANNOTATIONS.get(name);
            if (!known) {
              ctx.report(MESSAGES.UnknownAnnotation, orchOrigin(object), name);
              continue;
            }
            if (known.deprecated) ctx.report(MESSAGES.DeprecatedAnnotation, orchOrigin(object), name);
            if (known.resources.includes("Any")) continue;
            if (!known.resources.includes(kind)) {
              ctx.report(MESSAGES.MisplacedAnnotation, orchOrigin(object), name, known.resources.join(", "));
              continue;
            }
            const problem = validate(name, value);
            if (problem !== undefined) {
              ctx.report(MESSAGES.InvalidAnnotation, orchOrigin(object), name, problem);
            }
          }
          yield;
        }
      }
    },
  };
}
