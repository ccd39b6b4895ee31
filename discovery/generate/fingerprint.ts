/**
 * Short, exact identities of the inputs generators read, for cache keys. An identity changes whenever the
 * input's content can have changed, so two equal keys always mean equal generated resources.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { memoByIdentity } from "../../shared/memo/memo_by_identity.ts";
import type { Resource } from "../../shared/config/resource.ts";
import type { MergedDestinationRule } from "../push/destination_rule_index.ts";
import type { EndpointShards } from "../push/endpoint_index.ts";

/** JSON with object keys sorted, so equal values always give equal text whatever their key order. */
export function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v) => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k];
    return sorted;
  });
}

/**
 * `stableJson` of a frozen object, remembered per object: shape keys read a proxy's labels and locality on every
 * push, and the replacer walk cost more than the rest of the key.
 */
export const frozenJson: (value: object) => string = memoByIdentity(stableJson);

/** 128 bits of the SHA-256 of `stableJson(value)`, base64url. */
export function digestOf(value: unknown): string {
  return createHash("sha256").update(stableJson(value)).digest("base64url").slice(0, 22);
}

const specDigests = new WeakMap<object, string>();

/**
 * The identity of one config resource: `kind/namespace/name@resourceVersion`. The config store gives every
 * write a new store-wide `resourceVersion`, so the pair names one content; a resource without a version (built
 * by hand) is identified by a digest of its spec instead.
 */
export function configFingerprint(resource: Resource): string {
  const { gvk, meta } = resource;
  let version = meta.resourceVersion;
  if (version === undefined || version === "") {
    const spec = resource.spec as object;
    version = specDigests.get(spec);
    if (version === undefined) {
      version = `#${digestOf(spec)}`;
      specDigests.set(spec, version);
    }
  }
  return `${gvk.kind}/${meta.namespace}/${meta.name}@${version}`;
}

/** The identity of a merged DestinationRule: its resolved host and every merged source; "" for none. */
export function destinationRuleFingerprint(rule: MergedDestinationRule | undefined): string {
  if (rule === undefined) return "";
  return `${rule.host}=${rule.sources.map(configFingerprint).join("+")}`;
}

const shardDigests = new WeakMap<EndpointShards, string>();

/**
 * The identity of one version of a service's endpoints: a digest of every instance's endpoint and port,
 * computed once per (immutable) shards object. A digest rather than the index's counter, so snapshots built on
 * different endpoint indexes can never share a key by accident.
 */
export function endpointsFingerprint(shards: EndpointShards): string {
  let digest = shardDigests.get(shards);
  if (digest === undefined) {
    const content = [...shards.byCluster.entries()].map(([cluster, instances]) => [
      cluster,
      instances.map((i) => [i.servicePort.port, i.endpoint]),
    ]);
    digest = digestOf([shards.hostname, shards.namespace, content]);
    shardDigests.set(shards, digest);
  }
  return digest;
}
