/**
 * Turns a generator's output into encoded resources, through the encoded-resource cache: a cacheable
 * resource is looked up by its key and built and encoded only on a miss. The work is done in steps of about
 * one resource ({@link planBuild}), so the server can spread a large response over turns of the event loop.
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

/** A response's resources made in steps of about one resource each; what it returns is the list. */
export type BuildSteps = Generator<void, readonly VersionedResource[] | undefined, void>;

/** How one response's resources are had: at once from the shape memo, or by running steps. */
export type BuildPlan =
  | { readonly steps?: undefined; readonly resources: readonly VersionedResource[] | undefined }
  | {
    readonly steps: BuildSteps;
    /**
     * Equal for two builds that the shape memo says give the same list ({@link ShapeMemo.listKey}), with the
     * memo's generation when the build started; absent when the list is the proxy's own.
     */
    readonly shared?: { readonly key: string; readonly generation: number };
  };

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
  const plan = planBuild(deps, proxy, typeUrl, push, request);
  if (plan.steps === undefined) return plan.resources;
  for (;;) {
    const step = plan.steps.next();
    if (step.done) return step.value;
  }
}

/**
 * What {@link buildResources} does, split so a caller can run it in slices: what the shape memo already holds
 * is returned at once, anything else as steps that each build about one resource. The steps read `push` and
 * `proxy` only, so a pause between them changes nothing they make; what they would add to the cache or the
 * shape memo after either was invalidated or cleared during a pause is left out of it (it was read before).
 *
 * @throws {GenerateError} when the generator's shape throws (the steps throw it for the rest)
 */
export function planBuild<P extends PushSnapshot>(
  deps: BuildDeps<P>,
  proxy: Proxy,
  typeUrl: string,
  push: P,
  request: GenerateRequest,
): BuildPlan {
  const generator = deps.generators.find(proxy, typeUrl);
  if (generator === undefined) return { resources: undefined };
  if (generator.shapeOf === undefined || deps.shapes === undefined || !deps.cache.enabled) {
    return { steps: resolve(deps, generator, proxy, typeUrl, push, request) };
  }
  let shape: string | undefined;
  try {
    shape = generator.shapeOf(proxy, push, request);
  } catch (cause) {
    throw new GenerateError(typeUrl, proxy.id, cause);
  }
  if (shape === undefined) return { steps: resolve(deps, generator, proxy, typeUrl, push, request) };
  const shapes = deps.shapes;
  const prefix = shapes.prefix(deps.generators.flavorOf(proxy), typeUrl, shape, request);
  const shared = shapes.get(prefix, request.names, push);
  if (shared !== undefined) return { resources: shared };
  const generation = shapes.generation;
  const unchanged = () => shapes.generation === generation;
  const steps = function* (): BuildSteps {
    const resources = generator.resourcePerName === true && request.names.length > 0
      ? yield* resolveByName(
        request.names,
        shapes.byName(prefix, push),
        (name, resource) => {
          if (unchanged()) shapes.setByName(prefix, push, name, resource);
        },
        (names) => resolve(deps, generator, proxy, typeUrl, push, { ...request, names }),
      )
      : yield* resolve(deps, generator, proxy, typeUrl, push, request);
    if (unchanged()) shapes.set(prefix, request.names, push, resources);
    return resources;
  };
  return { steps: steps(), shared: { key: shapes.listKey(prefix, request.names), generation } };
}

/**
 * Resolves a named request name by name: names another proxy of the shape already asked for are taken from
 * `known`, only the others are generated (in one call to `generate`), and what they gave is `remember`ed. Proxies that
 * each watch their own few names then share the work per name, as proxies watching equal lists share lists.
 */
function* resolveByName(
  names: readonly string[],
  known: ReadonlyMap<string, VersionedResource | null>,
  remember: (name: string, resource: VersionedResource | null) => void,
  generate: (missing: readonly string[]) => Generator<void, VersionedResource[], void>,
): Generator<void, VersionedResource[], void> {
  const missing = names.filter((name) => !known.has(name));
  // What was generated now is read from here: the memo may not keep it.
  const fresh = new Map<string, VersionedResource | null>();
  if (missing.length > 0) {
    const generated = yield* generate(missing);
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

/** The resources of one generation, a step per resource (its making, its cache lookup, its encoding). */
function* resolve<P extends PushSnapshot>(
  deps: BuildDeps<P>,
  generator: XdsGenerator<P>,
  proxy: Proxy,
  typeUrl: string,
  push: P,
  request: GenerateRequest,
): Generator<void, VersionedResource[], void> {
  const wanted = request.names.length === 0 ? undefined : new Set(request.names);
  const out: VersionedResource[] = [];
  const generation = deps.cache.generation;
  try {
    const generated = generator.generateEach?.(proxy, push, request) ??
      generator.generate(proxy, push, request);
    for (const resource of generated) {
      if (wanted !== undefined && !wanted.has(resource.name)) continue;
      if (!isCacheable(resource)) {
        out.push(new VersionedResource(resource.name, resource.encoded));
        yield;
        continue;
      }
      let versioned = deps.cache.get(resource.key.id);
      if (versioned === undefined) {
        const encoded = resource.encode?.(deps.schema) ?? encodeAny(typeUrl, resource.build(), deps.schema);
        versioned = new VersionedResource(resource.name, encoded);
        // An invalidation during a pause may have been for what this build read before it.
        if (deps.cache.generation === generation) deps.cache.add(resource.key, typeUrl, versioned);
      }
      out.push(versioned);
      yield;
    }
  } catch (cause) {
    throw new GenerateError(typeUrl, proxy.id, cause);
  }
  return out;
}
