/**
 * Whether two snapshots' VirtualServices differ in their HTTP routes alone. A sidecar's listeners read every
 * other part of a VirtualService: which one claims a hostname (its hosts, its gateway bindings, its exportTo
 * and its place in creation order) and that one's TCP and TLS routes (matches, destinations, weights); never
 * its HTTP routes, which reach Envoy through RDS. The comparison is of the indexed VirtualServices, after
 * name resolution, delegate merging and the index's own exclusions, so a VirtualService the index drops or
 * keeps because of its HTTP routes (a delegating root with delegation off) shows as a difference.
 *
 * @module
 */
import type { IndexedVirtualService, VirtualServiceIndex } from "./virtual_service_index.ts";
import { namesVirtualService, type PushRequest, withHttpRoutesAlone } from "./push_request.ts";

/**
 * What a sidecar's listeners may read of an indexed VirtualService: all but its HTTP routes and the delegates
 * merged into them (metadata the generators never read, such as labels, annotations and the resource version,
 * is left out too, so a rewrite that changes only those compares equal).
 */
function beyondHttpRoutes(vs: IndexedVirtualService): string {
  const { http: _http, ...spec } = vs.resource.spec;
  const { namespace, name, creationTimestamp } = vs.resource.meta;
  return JSON.stringify([namespace, name, creationTimestamp ?? "", vs.hosts, vs.gateways, vs.exportTo, spec]);
}

/**
 * True when `after`'s VirtualServices are `before`'s, in the same order, each the same but for its HTTP
 * routes: a change between them cannot change a sidecar's listeners.
 */
export function differInHttpRoutesAlone(before: VirtualServiceIndex, after: VirtualServiceIndex): boolean {
  if (before.all.length !== after.all.length) return false;
  for (let i = 0; i < before.all.length; i++) {
    const was = before.all[i], is = after.all[i];
    if (was !== is && beyondHttpRoutes(was) !== beyondHttpRoutes(is)) return false;
  }
  return true;
}

/**
 * Marks the requests whose VirtualService changes cannot change a sidecar's listeners, as their snapshots are
 * published. A request's own changes are not enough to tell: a snapshot reads the store as it is when built,
 * so it may hold a change whose event (and request) comes later, and a proxy that connected meanwhile has
 * listeners from that snapshot. So the comparison is with the run: the VirtualServices of every snapshot
 * published since the last push that rebuilt every sidecar's listeners for a VirtualService change, while all
 * of them are alike but for HTTP routes. A snapshot that differs breaks the run; the next request that names
 * a VirtualService is then left unmarked (its push rebuilds the listeners, from its snapshot or a newer one)
 * and starts a new run.
 */
export class HttpRoutesAloneMarker {
  /** The VirtualServices of the run; undefined when a snapshot published since its start differs. */
  #run: VirtualServiceIndex | undefined;

  /** Starts with the first snapshot's VirtualServices: every proxy's listeners are built from it or later. */
  constructor(first: VirtualServiceIndex) {
    this.#run = first;
  }

  /** `request`, marked when it may be ({@link withHttpRoutesAlone}), as its snapshot `published` is out. */
  published(request: PushRequest, published: VirtualServiceIndex): PushRequest {
    const run = this.#run;
    const alike = run !== undefined && differInHttpRoutesAlone(run, published);
    if (!namesVirtualService(request)) {
      if (!alike) this.#run = undefined;
      return request;
    }
    if (alike) return withHttpRoutesAlone(request);
    this.#run = published;
    return request;
  }
}
