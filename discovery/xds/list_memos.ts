/**
 * Answers about resource and name lists that proxies of one shape share (the list a shape was sent, the
 * names it watches), worked out once per list rather than once per proxy. Owned by one xDS server: each table
 * holds its lists weakly (an entry goes with its list) and counts what it computed for `/debug/cachez`.
 *
 * @module
 */
import type { ControlPlaneInfo } from "@mesh/proto/discovery_frame";
import { type FramedResponse, responseInputs } from "./resource_runs.ts";
import { type NameLookup, sameResource, type VersionedResource } from "./versioned_resource.ts";

type Resources = readonly VersionedResource[];

/** The inputs of a type's responses last worked out, and what they were worked out from. */
interface LastInputs {
  readonly version: string;
  readonly nonceVersion: string | undefined;
  readonly controlPlane: ControlPlaneInfo | undefined;
  readonly inputs: string;
}

/** A value per pair of objects, by identity, held while the first lives; counts what it computed. */
class PairMemo<A extends object, B extends object, V> {
  readonly #values = new WeakMap<A, WeakMap<B, V>>();
  computed = 0;

  constructor(readonly compute: (a: A, b: B) => V) {}

  get(a: A, b: B): V {
    let byB = this.#values.get(a);
    if (byB === undefined) this.#values.set(a, byB = new WeakMap());
    const known = byB.get(b);
    if (known !== undefined || byB.has(b)) return known as V;
    const value = this.compute(a, b);
    byB.set(b, value);
    this.computed++;
    return value;
  }
}

/** The answers one server shares between its connections. */
export class ListMemos {
  /**
   * Whether a generation is exactly a sent list, in its order. Generators list resources in a stable order,
   * and a reordered list is only resent; no index is built, since an Envoy sidecar's list is its own.
   */
  readonly #holds = new PairMemo<Resources, Resources, boolean>((sent, generated) =>
    sent.length === generated.length && sent.every((resource, i) => sameResource(resource, generated[i]))
  );
  /** The names of a held list not in a lookup. */
  readonly #resourcesNotIn = new PairMemo<Resources, NameLookup, readonly string[]>((list, present) =>
    Object.freeze(list.filter((r) => !present.has(r.name)).map((r) => r.name))
  );
  /** The names of a subscribed list not in a lookup. */
  readonly #namesNotIn = new PairMemo<readonly string[], NameLookup, readonly string[]>((list, present) =>
    Object.freeze(list.filter((name) => !present.has(name)))
  );
  readonly #indexes = new WeakMap<Resources, ReadonlyMap<string, VersionedResource>>();
  #indexesBuilt = 0;
  readonly #sets = new WeakMap<readonly string[], ReadonlySet<string>>();
  #setsComputed = 0;
  /** Per resource list, the name list last asked about and whether the resources are exactly its names. */
  readonly #coverage = new WeakMap<Resources, { keep: readonly string[]; covers: boolean }>();
  #coverageComputed = 0;
  /** Per list: the response last framed around it, and everything else it was framed from. */
  readonly #responses = new WeakMap<
    Resources,
    { readonly inputs: string; readonly response: FramedResponse }
  >();
  #responsesFramed = 0;
  /** Per protocol and type URL, the inputs last worked out ({@link inputsOf}); one per type a generator serves. */
  readonly #inputs = {
    sotw: new Map<string, LastInputs>(),
    delta: new Map<string, LastInputs>(),
  };

  /** Whether `generated` is exactly `sent`, in its order; both lists must never change. */
  holds(sent: Resources, generated: Resources): boolean {
    return this.#holds.get(sent, generated);
  }

  /** The names of the resources of `list` not in `present`, frozen. */
  resourcesNotIn(list: Resources, present: NameLookup): readonly string[] {
    return this.#resourcesNotIn.get(list, present);
  }

  /** The names of `list` not in `present`, frozen. */
  namesNotIn(list: readonly string[], present: NameLookup): readonly string[] {
    return this.#namesNotIn.get(list, present);
  }

  /**
   * A resource list by name, built once per list and kept as long as the list: proxies of one shape share the
   * list, so every record of it (what a proxy holds, what it was sent, which names an answer has) shares this.
   */
  indexByName(list: Resources): ReadonlyMap<string, VersionedResource> {
    let index = this.#indexes.get(list);
    if (index === undefined) {
      this.#indexes.set(list, index = new Map(list.map((r) => [r.name, r])));
      this.#indexesBuilt++;
    }
    return index;
  }

  /**
   * {@link indexByName} as one function value for every record that looks its lists up (a closure per record
   * was held by every stream, a few each).
   */
  readonly indexLookup = (list: Resources): ReadonlyMap<string, VersionedResource> => this.indexByName(list);

  /** {@link setOf} as one function value for every record that looks its lists up. */
  readonly setLookup = (list: readonly string[]): ReadonlySet<string> => this.setOf(list);

  /** The set of the names of a list that never changes. */
  setOf(list: readonly string[]): ReadonlySet<string> {
    let set = this.#sets.get(list);
    if (set === undefined) {
      this.#sets.set(list, set = new Set(list));
      this.#setsComputed++;
    }
    return set;
  }

  /**
   * Whether `resources` are exactly the names of `keep` (a list without repeats, as watches hold). Proxies of
   * a shape share both lists, so the answer is kept per resource list for the last name list asked about.
   */
  covers(resources: Resources, keep: readonly string[]): boolean {
    if (resources.length !== keep.length) return false;
    const known = this.#coverage.get(resources);
    if (known !== undefined && known.keep === keep) return known.covers;
    const names = new Set(keep);
    const result = names.size === keep.length && resources.every((r) => names.has(r.name));
    this.#coverage.set(resources, { keep, covers: result });
    this.#coverageComputed++;
    return result;
  }

  /**
   * {@link responseInputs} of a response, the same string for every proxy asking with the same inputs: the
   * proxies of a push all ask with the same ones, and each would otherwise make its own.
   */
  inputsOf(
    protocol: "sotw" | "delta",
    typeUrl: string,
    version: string,
    nonceVersion: string | undefined,
    controlPlane: ControlPlaneInfo | undefined,
  ): string {
    const byType = this.#inputs[protocol];
    const last = byType.get(typeUrl);
    if (
      last !== undefined && last.version === version && last.nonceVersion === nonceVersion &&
      last.controlPlane === controlPlane
    ) {
      return last.inputs;
    }
    const inputs = responseInputs(protocol, typeUrl, version, nonceVersion, controlPlane);
    byType.set(typeUrl, { version, nonceVersion, controlPlane, inputs });
    return inputs;
  }

  /**
   * The response carrying `resources`, shared by every response made for the same list from the same
   * `inputs` (everything else the response holds, but the nonce: protocol, type, version, control plane);
   * `frame` makes it, with a fresh nonce, when there is none yet. Only for lists framed as a run, so a list
   * one proxy watches alone keeps a response of its own and nothing is kept for it.
   */
  sharedResponse(resources: Resources, inputs: string, frame: () => FramedResponse): FramedResponse {
    const known = this.#responses.get(resources);
    if (known !== undefined && known.inputs === inputs) return known.response;
    const response = frame();
    this.#responses.set(resources, { inputs, response });
    this.#responsesFramed++;
    return response;
  }

  /** How many answers each table worked out (and holds while their lists live), for `/debug/cachez`. */
  stats(): Record<string, number> {
    return {
      sentListHolds: this.#holds.computed,
      heldNotListed: this.#resourcesNotIn.computed,
      subscribedNotListed: this.#namesNotIn.computed,
      subscribedSets: this.#setsComputed,
      listIndexes: this.#indexesBuilt,
      coverage: this.#coverageComputed,
      sharedResponses: this.#responsesFramed,
    };
  }
}
