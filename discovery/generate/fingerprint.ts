/**
 * Short, exact identities of the inputs generators read, for cache keys. An identity changes whenever the
 * input's content can have changed, so two equal keys always mean equal generated resources.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { type DerivedMemo, derivedTable } from "../push/derived_memo.ts";
import type { Resource } from "@mesh/shared/config/resource";
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

const FROZEN_JSON = derivedTable<object, undefined, string>("frozenJson", { carried: true });

/**
 * `stableJson` of a frozen object, remembered per object in `memo` (a snapshot's): shape keys read a proxy's
 * labels and locality on every push, and the replacer walk cost more than the rest of the key.
 */
export function frozenJson(memo: DerivedMemo, value: object): string {
  return memo.get(FROZEN_JSON, value, undefined, () => stableJson(value));
}

/** 128 bits of the SHA-256 of `stableJson(value)`, base64url. */
export function digestOf(value: unknown): string {
  return createHash("sha256").update(stableJson(value)).digest("base64url").slice(0, 22);
}

const SPEC_DIGESTS = derivedTable<object, undefined, string>("specDigests", { carried: true });

/**
 * The identity of one config resource: `kind/namespace/name@resourceVersion`. The config store gives every
 * write a new store-wide `resourceVersion`, so the pair names one content; a resource without a version (built
 * by hand) is identified by a digest of its spec instead.
 */
export function configFingerprint(memo: DerivedMemo, resource: Resource): string {
  const { gvk, meta } = resource;
  let version = meta.resourceVersion;
  if (version === undefined || version === "") {
    const spec = resource.spec as object;
    version = memo.get(SPEC_DIGESTS, spec, undefined, () => `#${digestOf(spec)}`);
  }
  return `${gvk.kind}/${meta.namespace}/${meta.name}@${version}`;
}

/** The identity of a merged DestinationRule: its resolved host and every merged source; "" for none. */
export function destinationRuleFingerprint(
  memo: DerivedMemo,
  rule: MergedDestinationRule | undefined,
): string {
  if (rule === undefined) return "";
  return `${rule.host}=${rule.sources.map((source) => configFingerprint(memo, source)).join("+")}`;
}

const SHARD_DIGESTS = derivedTable<EndpointShards, undefined, string>("endpointDigests", { carried: true });

/**
 * The identity of one version of a service's endpoints: a digest of every instance's endpoint and port,
 * computed once per (immutable) shards object and snapshot memo. A digest rather than the index's counter, so snapshots built on
 * different endpoint indexes can never share a key by accident.
 */
export function endpointsFingerprint(memo: DerivedMemo, shards: EndpointShards): string {
  return memo.get(SHARD_DIGESTS, shards, undefined, () => {
    const content = [...shards.byCluster.entries()].map(([cluster, instances]) => [
      cluster,
      instances.map((i) => [i.servicePort.port, i.endpoint]),
    ]);
    return digestOf([shards.hostname, shards.namespace, content]);
  });
}
