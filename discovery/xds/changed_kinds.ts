/**
 * The config kinds a push request changed, worked out once per change set: one push hands the same set to
 * every connection, and each asks which of its types the kinds may affect.
 *
 * @module
 */
import { kindOfKey } from "../push/push_request.ts";

/** Kinds of change sets, by the set's identity; owned by one xDS server, each entry held while its set lives. */
export class ChangedKinds {
  readonly #kinds = new WeakMap<ReadonlySet<string>, ReadonlySet<string>>();

  /** The kinds of the keys of `configsUpdated`; undefined (anything may have changed) stays undefined. */
  of(configsUpdated: ReadonlySet<string> | undefined): ReadonlySet<string> | undefined {
    if (configsUpdated === undefined) return undefined;
    let kinds = this.#kinds.get(configsUpdated);
    if (kinds === undefined) {
      kinds = new Set([...configsUpdated].map(kindOfKey));
      this.#kinds.set(configsUpdated, kinds);
    }
    return kinds;
  }
}
