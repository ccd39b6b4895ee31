/**
 * ADS responses built in the response gate's slices: a whole-mesh response is thousands of resources, and
 * built in one go it held the event loop for most of a second, so a probe or a healthy proxy's ACK waited
 * behind it. Builds that the shape memo says give the same list share one build while it runs: proxies of
 * one shape that ask at once would otherwise each start it, since the memo learns the list only at its end.
 *
 * @module
 */
import type { Proxy } from "../model/proxy.ts";
import type { GenerateRequest, PushSnapshot } from "../generate/generator.ts";
import { type BuildDeps, planBuild } from "./response_builder.ts";
import type { ResponseGate } from "./response_gate.ts";
import type { VersionedResource } from "./versioned_resource.ts";

/** What a build gives: the resources, or undefined when no generator serves the type. */
type Built = readonly VersionedResource[] | undefined;

/** A build under way that others of the same list may wait for. */
interface UnderWay {
  readonly push: object;
  /** The shape memo's generation when the build started: a later one means the memo was cleared since. */
  readonly generation: number;
  readonly list: Promise<Built>;
}

/** Builds responses in the gate's slices, one build at a time per list the shape memo shares. */
export class ResponseBuilds {
  readonly #underWay = new Map<string, UnderWay>();

  /** Builds run in the slices of `gate`'s turns. */
  constructor(readonly gate: ResponseGate) {}

  /**
   * The resources of `typeUrl` for `proxy`, as {@link buildResources} makes them, built in slices. A build of
   * the same list from the same snapshot already under way, started since the memo was last cleared, is
   * waited for instead of started again.
   *
   * @throws {GenerateError} (rejects) when the generator throws or a resource cannot be encoded
   */
  build<P extends PushSnapshot>(
    deps: BuildDeps<P>,
    proxy: Proxy,
    typeUrl: string,
    push: P,
    request: GenerateRequest,
  ): Promise<Built> {
    const plan = planBuild(deps, proxy, typeUrl, push, request);
    if (plan.steps === undefined) return Promise.resolve(plan.resources);
    const { shared } = plan;
    if (shared === undefined) return this.gate.inSlices(plan.steps);
    const running = this.#underWay.get(shared.key);
    if (running !== undefined && running.push === push && running.generation === shared.generation) {
      return running.list;
    }
    const entry: UnderWay = { push, generation: shared.generation, list: this.gate.inSlices(plan.steps) };
    this.#underWay.set(shared.key, entry);
    const forget = () => {
      if (this.#underWay.get(shared.key) === entry) this.#underWay.delete(shared.key);
    };
    entry.list.then(forget, forget);
    return entry.list;
  }

  /** How many builds are under way that others may wait for. */
  get underWay(): number {
    return this.#underWay.size;
  }
}
