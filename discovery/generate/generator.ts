/**
 * The contract between the xDS server and the code that makes resources. The server knows nothing about how
 * resources are made; a generator knows nothing about streams, nonces or caching policy.
 *
 * A generator is a pure function of (proxy, push snapshot, request). It returns either encoded resources or
 * cacheable descriptions: a cache key naming exactly what `build()` reads, plus `build()` itself. The server
 * looks the key up in the encoded-resource cache and calls `build()` only on a miss, so each resource is
 * encoded once per version of its inputs and the bytes are shared by every proxy that asks for the same key.
 *
 * @module
 */
import { createHash } from "node:crypto";
import type protobuf from "protobufjs";
import type { Proxy } from "../model/proxy.ts";
import type { MemoStats } from "@mesh/shared/memo/memo_stats";
import type { ConflictSink } from "../push/listener_conflicts.ts";
import { wholeKindOf } from "../push/push_request.ts";

/** What the xDS server needs from a push snapshot (the model's PushContext satisfies it). */
export interface PushSnapshot {
  /** Changes with every new snapshot; sent as `version_info` and encoded in nonces. */
  readonly version: string;
  /** Optional: what the snapshot's own memos hold, by name, for `/debug/cachez`. */
  memoStats?(): Readonly<Record<string, MemoStats>>;
  /** Optional: how many values each table of the snapshot's derived memo computed, for `/debug/cachez`. */
  derivedStats?(): Readonly<Record<string, number>>;
}

/** What a proxy asked for, and why the server is generating now. */
export interface GenerateRequest {
  /** Resource names the proxy watches; empty means every resource of the type (a wildcard watch). */
  readonly names: readonly string[];
  /**
   * False for an endpoint-only push: the generator may return only the resources affected by
   * `configsUpdated`; the server then sends no removals.
   */
  readonly full: boolean;
  /** Keys of the configs and services that changed; absent when unknown (everything may have changed). */
  readonly configsUpdated?: ReadonlySet<string>;
  /**
   * Where the generator reports the listener conflicts it meets, beside the resources it returns (the snapshot
   * is never written); absent, they are not counted. Not part of what a shape shares: `shapeOf` reports the
   * conflicts of each proxy it is asked about.
   */
  readonly conflicts?: ConflictSink;
}

/** A resource the generator encoded itself (with `encodeAny`); never cached. */
export interface EncodedResource {
  /** Resource name, unique within the type. */
  readonly name: string;
  /** The bytes of a `google.protobuf.Any` holding the resource. */
  readonly encoded: Uint8Array;
}

/**
 * The cache key of a resource: `id` must name everything `build()` reads, so equal ids always build equal
 * bytes. `dependsOn` lists the keys whose change makes the entry stale, in the form of `PushRequest`'s
 * `configsUpdated` (`configKey`/`serviceKey` of `discovery/push/push_request.ts`: `kind/namespace/name`, and
 * `ServiceEntry/<namespace>/<hostname>` for services and their endpoints); a push naming any of them drops it.
 */
export interface XdsCacheKey {
  /** Names every input `build()` reads, so equal ids always build equal bytes. */
  readonly id: string;
  /** Keys (`kind/namespace/name`) whose change makes the entry stale. */
  readonly dependsOn: readonly string[];
}

/** A resource described by its inputs; the server encodes `build()`'s result once per key. */
export interface CacheableResource {
  /** Resource name, unique within the type. */
  readonly name: string;
  /** Where the encoded resource is cached and what invalidates it. */
  readonly key: XdsCacheKey;
  /** The resource as a plain object for `encodeAny` (`.proto` field names). Called only on a cache miss. */
  build(): Record<string, unknown>;
  /**
   * Optional: the bytes of `encodeAny(typeUrl, build(), schema)`, made without building the whole object, for
   * resources assembled from parts that many resources share. Used instead of `build()` on a cache miss; must
   * give exactly those bytes.
   */
  encode?(schema: protobuf.Root): Uint8Array;
}

/** One resource a generator returns. */
export type GeneratedResource = EncodedResource | CacheableResource;

/** Makes the resources of one type URL. Must not throw for valid input; a throw is counted as an internal error. */
export interface XdsGenerator<P extends PushSnapshot = PushSnapshot> {
  /** The one type URL the generator makes. */
  readonly typeUrl: string;
  /** The resources `proxy` gets from snapshot `push` for `request`; pure: same inputs, same output. */
  generate(proxy: Proxy, push: P, request: GenerateRequest): readonly GeneratedResource[];
  /**
   * Optional: what `generate` returns, in the same order, made one resource per step of the iteration, so the
   * server can build a large response in slices and let other work run between them. As pure as `generate`:
   * a pause between two steps changes nothing of what the later ones make. A wrapper that replaces `generate`
   * must replace or leave out this too, or the server would build from the unwrapped one.
   */
  generateEach?(proxy: Proxy, push: P, request: GenerateRequest): Iterable<GeneratedResource>;
  /**
   * Optional: a string equal for two proxies exactly when `generate` returns the same resources for both
   * (same snapshot, same request), built from everything of the proxy that `generate` reads (e.g. its
   * namespace, Sidecar scope, labels it matches on, metadata it reads); `request` for what of the proxy a
   * given request makes it read (the request itself is part of the memo key already). The server then generates once per
   * shape and push and shares the list; undefined for a proxy whose resources are its own. A shape that
   * omits something `generate` reads leaks one proxy's configuration to another: when in doubt, leave this out.
   */
  shapeOf?(proxy: Proxy, push: P, request: GenerateRequest): string | undefined;
  /**
   * Optional, with `shapeOf`: true when, for a request that lists names, every resource is named by the
   * request and is the same whichever other names are asked for. The server then shares each name's resource
   * between proxies of a shape that watch different lists, and generates only names no such proxy asked for.
   */
  readonly resourcePerName?: boolean;
  /**
   * Optional: the config kinds (the `kind` of `configsUpdated` keys) whose changes cannot change what
   * `generate` returns for `proxy`, as the reference's per-type skip lists. A full push whose changes are all
   * of such kinds does not regenerate the type for the proxy: its last response stands for the new snapshot.
   * A kind `generate` reads in any way (directly, through the snapshot's indexes or the proxy's scope) must be
   * left out, or proxies keep stale configuration: when in doubt, leave it out.
   */
  unaffectedBy?(proxy: Proxy): ReadonlySet<string>;
}

/**
 * The `generate` and `generateEach` of a generator that makes its resources one per step with `each`: the list
 * is the steps run to their end, so the two can never disagree.
 */
export function stepwise<P extends PushSnapshot>(
  each: (proxy: Proxy, push: P, request: GenerateRequest) => Iterable<GeneratedResource>,
): Pick<XdsGenerator<P>, "generate" | "generateEach"> {
  return { generate: (proxy, push, request) => [...each(proxy, push, request)], generateEach: each };
}

/**
 * True when a full push that changed configs of `kinds` may change what `generator` returns for `proxy`:
 * unknown changes (undefined, or no kind at all) may change anything. A part of a kind (`<kind>.<part>`, as
 * `VIRTUAL_SERVICE_HTTP`) affects no type its whole kind cannot.
 */
export function mayAffect<P extends PushSnapshot>(
  generator: XdsGenerator<P>,
  proxy: Proxy,
  kinds: ReadonlySet<string> | undefined,
): boolean {
  if (kinds === undefined || kinds.size === 0 || generator.unaffectedBy === undefined) return true;
  const unaffected = generator.unaffectedBy(proxy);
  for (const kind of kinds) if (!unaffected.has(kind) && !unaffected.has(wholeKindOf(kind))) return true;
  return false;
}

/** The node `GENERATOR` metadata value that selects the Envoy sidecar generators (also used when unset). */
export const DEFAULT_GENERATOR = "default";

/** The node `GENERATOR` metadata value of proxyless gRPC clients. */
export const GRPC_GENERATOR = "grpc";

/**
 * Inputs longer than this are keyed by their digest. V8 hashes a string of more than 16383 characters by its
 * length alone, so long keys of equal length share one hash and every cache lookup compared them whole: an
 * Envoy sidecar's route configuration key is its plan, over half a megabyte, one per namespace.
 */
const LONGEST_LITERAL_KEY = 16_000;

/**
 * Builds a cache key from the type URL and every input a generator reads. Parts are JSON-encoded, so
 * `["a,b"]` and `["a", "b"]` never collide; long inputs are replaced by their SHA-256.
 */
export function cacheKey(
  typeUrl: string,
  parts: readonly (string | number | boolean | null)[],
  dependsOn: readonly string[],
): XdsCacheKey {
  const json = JSON.stringify(parts);
  const id = json.length <= LONGEST_LITERAL_KEY
    ? `${typeUrl} ${json}`
    : `${typeUrl} sha256:${createHash("sha256").update(json).digest("base64url")}`;
  return { id, dependsOn };
}

/** True when a generated resource carries a cache key rather than bytes. */
export function isCacheable(resource: GeneratedResource): resource is CacheableResource {
  return "key" in resource;
}

/**
 * Generators keyed by type URL and by the node's `GENERATOR` metadata. A proxy whose `GENERATOR` names a
 * registered flavour is served by that flavour alone (proxyless gRPC must never get sidecar resources); any
 * other proxy is served by the default flavour.
 */
export class GeneratorRegistry<P extends PushSnapshot = PushSnapshot> {
  readonly #flavors = new Map<string, Map<string, XdsGenerator<P>>>();

  /**
   * Registers `generator` for its type URL in `flavor`.
   *
   * @throws {TypeError} when the flavour already has a generator for that type URL
   */
  register(generator: XdsGenerator<P>, flavor: string = DEFAULT_GENERATOR): this {
    let byType = this.#flavors.get(flavor);
    if (byType === undefined) {
      byType = new Map();
      this.#flavors.set(flavor, byType);
    }
    if (byType.has(generator.typeUrl)) {
      throw new TypeError(`Generator flavour "${flavor}" already has a generator for "${generator.typeUrl}"`);
    }
    byType.set(generator.typeUrl, generator);
    return this;
  }

  /** The flavour serving `proxy`: its `GENERATOR` metadata when registered, else the default. */
  flavorOf(proxy: Proxy): string {
    const wanted = proxy.metadata.generator;
    return wanted !== undefined && this.#flavors.has(wanted) ? wanted : DEFAULT_GENERATOR;
  }

  /** True when a generator of some flavour serves `typeUrl`. */
  serves(typeUrl: string): boolean {
    for (const byType of this.#flavors.values()) if (byType.has(typeUrl)) return true;
    return false;
  }

  /** The generator of `typeUrl` for `proxy`, or undefined when its flavour has none. */
  find(proxy: Proxy, typeUrl: string): XdsGenerator<P> | undefined {
    return this.#flavors.get(this.flavorOf(proxy))?.get(typeUrl);
  }

  /** Registered flavours and their type URLs, for the debug interface. */
  describe(): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    for (const [flavor, byType] of this.#flavors) out[flavor] = [...byType.keys()].sort();
    return out;
  }
}
