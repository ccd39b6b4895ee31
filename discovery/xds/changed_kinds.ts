/**
 * The config kinds a push request changed, worked out once per request: one push hands the same request to
 * every connection, and each asks which of its types the kinds may affect.
 *
 * @module
 */
import { changedKindsOf, type PushRequest } from "../push/push_request.ts";

/** Kinds of requests, by the request's identity; owned by one xDS server, each entry held while it lives. */
export class ChangedKinds {
  readonly #kinds = new WeakMap<PushRequest, ReadonlySet<string>>();

  /** The kinds `request` changed ({@link changedKindsOf}); undefined (anything may have changed) stays so. */
  of(request: PushRequest): ReadonlySet<string> | undefined {
    if (request.configsUpdated === undefined) return undefined;
    let kinds = this.#kinds.get(request);
    if (kinds === undefined) {
      kinds = changedKindsOf(request)!;
      this.#kinds.set(request, kinds);
    }
    return kinds;
  }
}
