/**
 * EnvoyFilter patches on the Envoy CDS, LDS and RDS generators: a wrapper that applies the patches selecting
 * the proxy to each generated resource after it is built, and adds the resources ADD patches make.
 *
 * Caching: a patched resource's cache key is the generator's key plus a digest of the patches that apply to
 * it, and depends on their EnvoyFilters; the shape of the proxy adds which patches select it, so proxies with
 * different filters never share output. A patch is applied only when the resource stays valid by Envoy's
 * schema and field rules; otherwise it is skipped and reported ({@link EnvoyFilterReports}).
 *
 * Not applied yet: EXTENSION_CONFIG (no ECDS is served), `filterClass` (a plain HTTP_FILTER patch), and route
 * configuration matches by `gateway` or `portName` (they match nothing: our gateway route names do not carry
 * them). An Any merged with one of another type is replaced, where the reference concatenates bytes.
 *
 * @module
 */
import { createHash } from "node:crypto";
import type protobuf from "protobufjs";
import { loadEnvoySchema } from "@mesh/proto/envoy_schema";
import { formatPgvViolations, validatePgv } from "@mesh/proto/pgv_validate";
import { TYPE_URL } from "@mesh/proto/type_urls";
import type { ApplyTo, EnvoyConfigObjectPatch } from "@mesh/shared/config/networking/envoy_filter";
import type { Proxy } from "../../model/proxy.ts";
import type { PushContext } from "../../push/push_context.ts";
import { stableJson } from "../fingerprint.ts";
import { derivedTable } from "../../push/derived_memo.ts";
import { type GeneratedResource, isCacheable, type XdsGenerator } from "../generator.ts";
import { clusterContext, clusterValue, patchCluster } from "./envoy_filter_cluster.ts";
import { listenerContext, patchListener } from "./envoy_filter_listener.ts";
import { patchRouteConfig, routeContext } from "./envoy_filter_route.ts";
import { patchObject } from "./proto_merge.ts";
import type { EnvoyFilterReports } from "./envoy_filter_reports.ts";
import {
  contextMatches,
  envoyFilterPatches,
  type PatchContext,
  type SelectedPatch,
} from "./envoy_filter_select.ts";

type Obj = Record<string, unknown>;

/** How EnvoyFilter patches apply to the resources of one type. */
interface TypePatching {
  /** The patch kinds that change resources of this type. */
  readonly applyTo: readonly ApplyTo[];
  /** The patch kind whose ADD and REMOVE make and drop whole resources, if any. */
  readonly whole?: ApplyTo;
  /** The context of a resource of `proxy` called `name`. */
  context(proxyType: string, name: string): PatchContext;
  /** The resource after `patch` (undefined: removed); the same object when the patch does not apply. */
  patch(resource: Obj, patch: EnvoyConfigObjectPatch, root: protobuf.Root): Obj | undefined;
  /** The resource an ADD patch makes. */
  added?(patch: EnvoyConfigObjectPatch, root: protobuf.Root): Obj;
}

const PATCHING: Readonly<Record<string, TypePatching & { readonly short: string }>> = {
  [TYPE_URL.cluster]: {
    short: "cds",
    applyTo: ["CLUSTER"],
    whole: "CLUSTER",
    context: clusterContext,
    patch: patchCluster,
    added: clusterValue,
  },
  [TYPE_URL.listener]: {
    short: "lds",
    applyTo: [
      "LISTENER",
      "FILTER_CHAIN",
      "NETWORK_FILTER",
      "HTTP_FILTER",
      "ROUTE_CONFIGURATION",
      "VIRTUAL_HOST",
      "HTTP_ROUTE",
    ],
    whole: "LISTENER",
    context: listenerContext,
    patch: patchListener,
    added: (patch, root) =>
      patchObject(root.lookupType("envoy.config.listener.v3.Listener"), patch.patch.value ?? {}, root),
  },
  [TYPE_URL.route]: {
    short: "rds",
    applyTo: ["ROUTE_CONFIGURATION", "VIRTUAL_HOST", "HTTP_ROUTE"],
    context: (proxyType) => routeContext(proxyType),
    patch: patchRouteConfig,
  },
};

const digest = (value: unknown) => createHash("sha256").update(stableJson(value)).digest("base64url");

/** Per snapshot, by cache id: a resource a whole-resource REMOVE may drop, patched (null: dropped). */
const PATCHED = derivedTable<PushContext, string, Obj | null>("envoyFilter.patched");
/** Per snapshot, by type and patch: the resource an ADD patch makes (null: rejected). */
const ADDED = derivedTable<PushContext, string, Obj | null>("envoyFilter.added");

/** The contexts of a proxy's resources. */
function contextsOf(proxy: Proxy): readonly PatchContext[] {
  return proxy.type === "router" ? ["GATEWAY"] : ["SIDECAR_INBOUND", "SIDECAR_OUTBOUND"];
}

/**
 * `generator` with the EnvoyFilter patches that select each proxy applied to its resources (CDS, LDS, RDS;
 * other types are returned as they are). Skipped patches are reported to `reports`.
 */
export function withEnvoyFilters(
  generator: XdsGenerator<PushContext>,
  reports: EnvoyFilterReports,
): XdsGenerator<PushContext> {
  const patching = PATCHING[generator.typeUrl];
  if (patching === undefined) return generator;
  const type = patching.short;
  const selected = (proxy: Proxy, push: PushContext) =>
    envoyFilterPatches(proxy, push).filter((p) => patching.applyTo.includes(p.patch.applyTo));

  function apply(resource: Obj | undefined, patches: readonly SelectedPatch[], root: protobuf.Root) {
    let current = resource;
    for (const { filterKey, index, patch } of patches) {
      if (current === undefined) return undefined;
      let next: Obj | undefined;
      let problem: string | undefined;
      try {
        next = patching.patch(current, patch, root);
        if (next !== undefined && next !== current) {
          const violations = validatePgv(generator.typeUrl, next, { root });
          if (violations.length > 0) problem = formatPgvViolations(violations);
        }
      } catch (cause) {
        problem = (cause as Error).message;
      }
      if (problem !== undefined) reports.rejected(filterKey, index, type, problem);
      else current = next;
    }
    return current;
  }

  function added(filterKey: string, index: number, patch: EnvoyConfigObjectPatch, root: protobuf.Root) {
    let problem: string | undefined;
    try {
      const resource = patching.added!(patch, root);
      const violations = validatePgv(generator.typeUrl, resource, { root });
      if (violations.length > 0) problem = formatPgvViolations(violations);
      else if (typeof resource.name !== "string" || resource.name === "") {
        problem = "The added resource has no name";
      } else return resource;
    } catch (cause) {
      problem = (cause as Error).message;
    }
    reports.rejected(filterKey, index, type, problem);
    return null;
  }

  function addedResources(
    proxy: Proxy,
    push: PushContext,
    patches: readonly SelectedPatch[],
    root: protobuf.Root,
  ) {
    if (patching.whole === undefined || patching.added === undefined) return [];
    const contexts = contextsOf(proxy);
    const out: GeneratedResource[] = [];
    for (const { filterKey, index, patch } of patches) {
      if (patch.applyTo !== patching.whole || patch.patch.operation !== "ADD") continue;
      if (!contexts.some((c) => contextMatches(patch, c))) continue;
      const id = `${generator.typeUrl} envoyfilter-add ${digest([filterKey, index, patch])}`;
      const resource = push.derived.get(ADDED, push, id, () => added(filterKey, index, patch, root));
      if (resource === null) continue;
      out.push({ name: resource.name as string, key: { id, dependsOn: [filterKey] }, build: () => resource });
    }
    return out;
  }

  return {
    ...generator,
    shapeOf: generator.shapeOf === undefined ? undefined : (proxy, push, request) => {
      const shape = generator.shapeOf!(proxy, push, request);
      if (shape === undefined) return undefined;
      const patches = selected(proxy, push);
      return patches.length === 0
        ? shape
        : `${shape}|envoyfilter:${patches.map((p) => `${p.filterKey}#${p.index}`)}`;
    },
    generate(proxy, push, request) {
      const generated = generator.generate(proxy, push, request);
      const patches = selected(proxy, push);
      if (patches.length === 0) return generated;
      const root = loadEnvoySchema();
      const byContext = new Map<PatchContext, { patches: SelectedPatch[]; digest: string; keys: string[] }>();
      const forContext = (context: PatchContext) => {
        let entry = byContext.get(context);
        if (entry === undefined) {
          const own = patches.filter((p) => contextMatches(p.patch, context));
          entry = { patches: own, digest: digest(own), keys: [...new Set(own.map((p) => p.filterKey))] };
          byContext.set(context, entry);
        }
        return entry;
      };
      const out: GeneratedResource[] = [];
      for (const resource of generated) {
        // Generators that encode themselves (none of these three today) are left as they are.
        if (!isCacheable(resource)) {
          out.push(resource);
          continue;
        }
        const { patches: own, digest: id, keys } = forContext(patching.context(proxy.type, resource.name));
        if (own.length === 0) {
          out.push(resource);
          continue;
        }
        const key = {
          id: `${resource.key.id}|envoyfilter:${id}`,
          dependsOn: [...resource.key.dependsOn, ...keys],
        };
        const removes = own.some((p) =>
          p.patch.applyTo === patching.whole && p.patch.patch.operation === "REMOVE"
        );
        if (removes) {
          // Whether the resource stays is known only once it is patched.
          const patched = push.derived.get(
            PATCHED,
            push,
            key.id,
            () => apply(resource.build(), own, root) ?? null,
          );
          if (patched !== null) out.push({ name: resource.name, key, build: () => patched });
          continue;
        }
        out.push({ name: resource.name, key, build: () => apply(resource.build(), own, root) as Obj });
      }
      out.push(...addedResources(proxy, push, patches, root));
      return out;
    },
  };
}
