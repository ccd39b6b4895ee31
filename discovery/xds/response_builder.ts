/**
 * Turns a generator's output into encoded resources, through the encoded-resource cache: a cacheable
 * resource is looked up by its key and built and encoded only on a miss.
 *
 * @module
 */
import type protobuf from "protobufjs";
import { encodeAny } from "@mesh/proto/any_codec";
import type { Proxy } from "../model/proxy.ts";
import {
  type GenerateRequest,
  type GeneratorRegistry,
  isCacheable,
  type PushSnapshot,
  type XdsGenerator,
} from "../generate/generator.ts";
import type { ShapeMemo } from "./shape_memo.ts";
import { VersionedResource } from "./versioned_resource.ts";
import type { XdsCache } from "./xds_cache.ts";

/** A generator failed or produced a resource that does not fit Envoy's schema. */
export class GenerateError extends Error {
  /** `typeUrl` is the type being generated; the proxy id goes into the message, `cause` is the failure. */
  constructor(readonly typeUrl: string, proxyId: string, cause: unknown) {
    super(
      `Generating "${typeUrl}" for proxy "${proxyId}" failed: ${
        cause instanceof Error ? cause.message : cause
      }`,
      { cause },
    );
    this.name = "GenerateError";
  }
}

/** What resolving needs: where generators and cached bytes live, and the schema to encode with. */
export interface BuildDeps<P extends PushSnapshot> {
  /** Generators by type URL and flavour. */
  readonly generators: GeneratorRegistry<P>;
  /** Cache of encoded resources. */
  readonly cache: XdsCache;
  /** Envoy's v3 schema, for encoding and checking resources. */
  readonly schema: protobuf.Root;
  /** Shares results between proxies of the same shape; used only while the cache is enabled. */
  readonly shapes?: ShapeMemo;
}

/**
 * Generates and encodes the resources of `typeUrl` for `proxy`; when `request.names` is not empty only
 * those names are kept. Returns undefined when the proxy's generator flavour has no generator for the type.
 * The list may be shared with other proxies of the same shape: never modify it.
 *
 * @throws {GenerateError} when the generator throws or a built resource cannot be encoded
 */
export function buildResources<P extends PushSnapshot>(
  deps: BuildDeps<P>,
  proxy: Proxy,
  typeUrl: string,
  push: P,
  request: GenerateRequest,
): readonly VersionedResource[] | undefined {
  const generator = deps.generators.find(proxy, typeUrl);
  if (generator === undefined) return undefined;
  if (generator.shapeOf === undefined || deps.shapes === undefined || !deps.cache.enabled) {
    return resolve(deps, generator, proxy, typeUrl, push, request);
  }
  let shape: string | undefined;
  try {
    shape = generator.shapeOf(proxy, push, request);
  } catch (cause) {
    throw new GenerateError(typeUrl, proxy.id, cause);
  }
  if (shape === undefined) return resolve(deps, generator, proxy, typeUrl, push, request);
  const prefix = deps.shapes.prefix(deps.generators.flavorOf(proxy), typeUrl, shape, request);
  const shared = deps.shapes.get(prefix, request.names, push);
  if (shared !== undefined) return shared;
  const resources = generator.resourcePerName === true && request.names.length > 0
    ? resolveByName(
      request.names,
      deps.shapes.byName(prefix, push),
      (name, resource) => deps.shapes!.setByName(prefix, push, name, resource),
      (names) => resolve(deps, generator, proxy, typeUrl, push, { ...request, names }),
    )
    : resolve(deps, generator, proxy, typeUrl, push, request);
  deps.shapes.set(prefix, request.names, push, resources);
  return resources;
}

/**
 * Resolves a named request name by name: names another proxy of the shape already asked for are taken from
 * `known`, only the others are generated (in one call to `generate`), and what they gave is `remember`ed. Proxies that
 * each watch their own few names then share the work per name, as proxies watching equal lists share lists.
 */
function resolveByName(
  names: readonly string[],
  known: ReadonlyMap<string, VersionedResource | null>,
  remember: (name: string, resource: VersionedResource | null) => void,
  generate: (missing: readonly string[]) => readonly VersionedResource[],
): VersionedResource[] {
  const missing = names.filter((name) => !known.has(name));
  // What was generated now is read from here: the memo may not keep it.
  const fresh = new Map<string, VersionedResource | null>();
  if (missing.length > 0) {
    const generated = generate(missing);
    for (const name of missing) fresh.set(name, null);
    for (const resource of generated) fresh.set(resource.name, resource);
    for (const [name, resource] of fresh) remember(name, resource);
  }
  const out: VersionedResource[] = [];
  const seen = new Set<string>();
  for (const name of names) {
    const resource = fresh.size > 0 && fresh.has(name) ? fresh.get(name) : known.get(name);
    if (resource !== null && resource !== undefined && !seen.has(name)) {
      seen.add(name);
      out.push(resource);
    }
  }
  return out;
}

function resolve<P extends PushSnapshot>(
  deps: BuildDeps<P>,
  generator: XdsGenerator<P>,
  proxy: Proxy,
  typeUrl: string,
  push: P,
  request: GenerateRequest,
): VersionedResource[] {
  const wanted = request.names.length === 0 ? undefined : new Set(request.names);
  const out: VersionedResource[] = [];
  try {
    for (const generated of generator.generate(proxy, push, request)) {
      if (wanted !== undefined && !wanted.has(generated.name)) continue;
      if (!isCacheable(generated)) {
        out.push(new VersionedResource(generated.name, generated.encoded));
        continue;
      }
      let resource = deps.cache.get(generated.key.id);
      if (resource === undefined) {
        const encoded = generated.encode?.(deps.schema) ?? encodeAny(typeUrl, generated.build(), deps.schema);
        resource = new VersionedResource(generated.name, encoded);
        deps.cache.add(generated.key, typeUrl, resource);
      }
      out.push(resource);
    }
  } catch (cause) {
    throw new GenerateError(typeUrl, proxy.id, cause);
  }
  return out;
}
