/**
 * Which EnvoyFilter patches apply to a proxy, as the reference selects them: the filters of the mesh root
 * namespace, then those of the proxy's own namespace (each group oldest first), whose `workloadSelector`
 * matches the proxy's labels, keeping the patches whose `match.proxy` fits the proxy's version and metadata.
 * Which generated object a patch changes (its context and per-type match) is the type patchers' concern.
 *
 * @module
 */
import type { Resource } from "@mesh/shared/config/resource";
import type { EnvoyConfigObjectPatch, EnvoyFilterSpec } from "@mesh/shared/config/networking/envoy_filter";
import { compareByCreation } from "../../model/config_order.ts";
import { selectorMatches } from "../../model/labels.ts";
import type { Proxy } from "../../model/proxy.ts";
import type { PushContext } from "../../push/push_context.ts";
import { derivedTable } from "../../push/derived_memo.ts";
import { configKey } from "../../push/push_request.ts";
import { re2Matches } from "@mesh/shared/config/validation/regex";

/** One patch of one EnvoyFilter selecting a proxy. */
export interface SelectedPatch {
  /** The EnvoyFilter's config key (`EnvoyFilter/<namespace>/<name>`). */
  readonly filterKey: string;
  /** The patch's position in the filter's `configPatches`. */
  readonly index: number;
  /** The patch. */
  readonly patch: EnvoyConfigObjectPatch;
}

/** The context of a generated object: which side of a sidecar, or a gateway. */
export type PatchContext = "SIDECAR_INBOUND" | "SIDECAR_OUTBOUND" | "GATEWAY";

function versionMatches(pattern: string | undefined, version: string | undefined): boolean {
  if (pattern === undefined || pattern === "") return true;
  // The reference matches the regular expression anywhere in the version (Go's MatchString, RE2 syntax); the
  // version is what the proxy says, so it is matched in linear time.
  return re2Matches(pattern, version ?? "");
}

function metadataMatches(wanted: Readonly<Record<string, string>> | undefined, proxy: Proxy): boolean {
  if (wanted === undefined) return true;
  const raw = proxy.metadata.raw;
  return Object.entries(wanted).every(([k, v]) => raw[k] === v);
}

const BY_NAMESPACE = derivedTable<PushContext, string, readonly Resource[]>("envoyFilter.byNamespace");

/** The EnvoyFilters of `namespace`, oldest first. */
function inNamespace(push: PushContext, namespace: string): readonly Resource[] {
  return push.derived.get(
    BY_NAMESPACE,
    push,
    namespace,
    () => push.configs("EnvoyFilter").filter((r) => r.meta.namespace === namespace).sort(compareByCreation),
  );
}

/** The EnvoyFilter patches that apply to `proxy`, in the order they are applied. */
export function envoyFilterPatches(proxy: Proxy, push: PushContext): readonly SelectedPatch[] {
  const root = push.mesh.rootNamespace;
  const selecting = (namespace: string) =>
    inNamespace(push, namespace).filter((r) =>
      selectorMatches((r.spec as EnvoyFilterSpec).workloadSelector?.labels, proxy.metadata.labels)
    );
  const filters: readonly Resource[] = [
    ...(root ? selecting(root) : []),
    ...(proxy.namespace !== root ? selecting(proxy.namespace) : []),
  ];
  return filters.flatMap((r) => {
    const filterKey = configKey("EnvoyFilter", r.meta.namespace, r.meta.name);
    return ((r.spec as EnvoyFilterSpec).configPatches ?? []).flatMap((patch, index) =>
      versionMatches(patch.match?.proxy?.proxyVersion, proxy.metadata.meshVersion) &&
        metadataMatches(patch.match?.proxy?.metadata, proxy)
        ? [{ filterKey, index, patch }]
        : []
    );
  });
}

/** True when `patch` applies in `context` (`ANY` or absent matches every context). */
export function contextMatches(patch: EnvoyConfigObjectPatch, context: PatchContext): boolean {
  const wanted = patch.match?.context ?? "ANY";
  return wanted === "ANY" || wanted === context;
}
