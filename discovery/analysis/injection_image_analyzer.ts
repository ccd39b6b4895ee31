import { type AnalysisContext, type Analyzer, orchOrigin } from "./analyzer.ts";
import { MESSAGES } from "./analysis_message.ts";
import { asRecord, asString, INJECTION_LABEL, PROXY_CONTAINER } from "./analysis_util.ts";
import { podContainers } from "./orch_specs.ts";

/** The ConfigMap holding the injector's configuration and chart values. */
const INJECTOR_CONFIG_MAP = "mesh-sidecar-injector";
/** The pod annotation that picks a proxy image of its own; such pods are not compared. */
const PROXY_IMAGE_ANNOTATION = "sidecar.mesh.io/proxyImage";

/**
 * The proxy image the injector's `values` name: `global.proxy.image` when it has a `/`, else
 * `hub/image:tag`; "" when the values are not JSON.
 */
export function injectorProxyImage(values: string | undefined): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(values ?? "");
  } catch {
    return "";
  }
  const global = asRecord(asRecord(parsed).global);
  const image = asString(asRecord(global.proxy).image);
  return image.includes("/") ? image : `${asString(global.hub)}/${image}:${asString(global.tag)}`;
}

/** Proxies of pods in injected namespaces whose image is not the injector's (IST0105). */
export const injectionImageAnalyzer: Analyzer = {
  name: "injection.ImageAnalyzer",
  description: "Checks the image of auto-injection configured with the running proxies on pods",
  requiresOrchestrator: true,
  *analyze(ctx: AnalysisContext) {
    const config = ctx.orch("ConfigMap").find((c) => c.metadata.name === INJECTOR_CONFIG_MAP);
    const expected = config ? injectorProxyImage(config.data?.values) : "";
    if (expected === "") return;
    const injected = new Set(
      ctx.orch("Namespace").filter((n) => n.metadata.labels?.[INJECTION_LABEL] === "enabled").map((n) =>
        n.metadata.name
      ),
    );
    yield;
    for (const pod of ctx.orch("Pod")) {
      if (!injected.has(pod.metadata.namespace ?? "")) continue;
      if ((pod.metadata.annotations?.[PROXY_IMAGE_ANNOTATION] ?? "") !== "") continue;
      for (const c of podContainers(pod)) {
        if (c.name !== PROXY_CONTAINER || c.image === expected) continue;
        ctx.report(MESSAGES.MeshProxyImageMismatch, orchOrigin(pod), c.image ?? "", expected);
      }
      yield;
    }
  },
};
