import { resourceKey } from "@mesh/shared/config/resource";

/** Why a push happened; the `type` label of `discovery_push_triggers`. */
export type TriggerReason =
  | "endpoint"
  | "config"
  | "service"
  | "proxy"
  | "global"
  | "unknown"
  | "debug"
  | "secret"
  | "networks";

/**
 * A request to push configuration to proxies. Immutable; requests merge with {@link mergePushRequests}.
 * A non-full request is endpoint-only: EDS for the services in `configsUpdated`.
 */
export interface PushRequest {
  /** True when anything but endpoints may have changed: a new PushContext is built and every type pushed. */
  readonly full: boolean;
  /**
   * `kind/namespace/name` keys of what changed (`ServiceEntry/<ns>/<hostname>` for services and endpoints);
   * undefined means "anything may have changed".
   */
  readonly configsUpdated?: ReadonlySet<string>;
  /**
   * True when the VirtualService changes among `configsUpdated` changed HTTP routes alone: every
   * VirtualService of the request's snapshot is, but for its HTTP routes, as it was in every snapshot a
   * sidecar's listeners may have been built from (`HttpRoutesAloneMarker`). Its changed kinds then name them
   * {@link VIRTUAL_SERVICE_HTTP}.
   */
  readonly httpRoutesAlone?: true;
  /** How many events of each reason this request stands for. */
  readonly reasons: Readonly<Partial<Record<TriggerReason, number>>>;
  /** `performance.now()` of the oldest event merged in, for convergence time. */
  readonly start: number;
}

/** The configsUpdated key of a resource or service: `kind/namespace/name`. */
export const configKey: (kind: string, namespace: string, name: string) => string = resourceKey;

/** The kind of a configsUpdated key (`kind/namespace/name`). */
export function kindOfKey(key: string): string {
  const slash = key.indexOf("/");
  return slash < 0 ? key : key.slice(0, slash);
}

/**
 * The kind of VirtualService changes that changed HTTP routes alone: a part of kind `VirtualService`
 * (`<kind>.<part>`), so a type unaffected by VirtualServices is unaffected by it, and a type that reads no
 * HTTP route (a sidecar's listeners) may say it is unaffected by this part alone.
 */
export const VIRTUAL_SERVICE_HTTP = "VirtualService.http";

/** The kind a part of a kind (`<kind>.<part>`, as {@link VIRTUAL_SERVICE_HTTP}) is of; a kind is its own. */
export function wholeKindOf(kind: string): string {
  const dot = kind.indexOf(".");
  return dot < 0 ? kind : kind.slice(0, dot);
}

/**
 * The kinds a full request changed: the kinds of its `configsUpdated` keys, with `VirtualService` narrowed to
 * {@link VIRTUAL_SERVICE_HTTP} when it changed HTTP routes alone; undefined when anything may have changed.
 */
export function changedKindsOf(request: PushRequest): ReadonlySet<string> | undefined {
  if (request.configsUpdated === undefined) return undefined;
  const kinds = new Set<string>();
  for (const key of request.configsUpdated) kinds.add(kindOfKey(key));
  if (request.httpRoutesAlone === true && kinds.delete("VirtualService")) kinds.add(VIRTUAL_SERVICE_HTTP);
  return kinds;
}

/** True when `changed` is known, not empty, and holds kinds (or parts of kinds) of `kinds` alone. */
export function onlyKinds(changed: ReadonlySet<string> | undefined, kinds: ReadonlySet<string>): boolean {
  if (changed === undefined || changed.size === 0) return false;
  for (const kind of changed) if (!kinds.has(kind) && !kinds.has(wholeKindOf(kind))) return false;
  return true;
}

/**
 * `request` marked as changing HTTP routes alone (as `HttpRoutesAloneMarker` finds when its snapshot is
 * published); `request` itself when it names no VirtualService.
 */
export function withHttpRoutesAlone(request: PushRequest): PushRequest {
  if (request.httpRoutesAlone === true || !namesVirtualService(request)) return request;
  return Object.freeze({ ...request, httpRoutesAlone: true as const });
}

/** True when `request` names a VirtualService among the configs it changed. */
export function namesVirtualService(request: PushRequest): boolean {
  if (request.configsUpdated === undefined) return false;
  for (const key of request.configsUpdated) if (kindOfKey(key) === "VirtualService") return true;
  return false;
}

/** True when every VirtualService change `request` names is known to have changed HTTP routes alone. */
function httpRoutesAloneIn(request: PushRequest): boolean {
  return request.httpRoutesAlone === true || !namesVirtualService(request);
}

/** The configsUpdated key of a service's hostname in a namespace. */
export function serviceKey(namespace: string, hostname: string): string {
  return resourceKey("ServiceEntry", namespace, hostname);
}

/** A request for one event. */
export function pushRequest(
  full: boolean,
  reason: TriggerReason,
  configsUpdated: Iterable<string> | undefined,
  start: number,
): PushRequest {
  return Object.freeze({
    full,
    ...(configsUpdated === undefined ? {} : { configsUpdated: Object.freeze(new Set(configsUpdated)) }),
    reasons: Object.freeze({ [reason]: 1 }),
    start,
  });
}

/**
 * Merges two requests as Istio does: full if either is, the oldest start, reason counts added, and the union of
 * configsUpdated unless either means "anything" (undefined), in which case the merge does too. The merge
 * changed HTTP routes alone when each of the two did or named no VirtualService (and one did).
 */
export function mergePushRequests(a: PushRequest | undefined, b: PushRequest): PushRequest {
  if (!a) return b;
  const reasons: Partial<Record<TriggerReason, number>> = { ...a.reasons };
  for (const [reason, count] of Object.entries(b.reasons) as [TriggerReason, number][]) {
    reasons[reason] = (reasons[reason] ?? 0) + count;
  }
  const configs = a.configsUpdated && b.configsUpdated
    ? Object.freeze(new Set([...a.configsUpdated, ...b.configsUpdated]))
    : undefined;
  const httpAlone = configs !== undefined && (a.httpRoutesAlone === true || b.httpRoutesAlone === true) &&
    httpRoutesAloneIn(a) && httpRoutesAloneIn(b);
  return Object.freeze({
    full: a.full || b.full,
    ...(configs ? { configsUpdated: configs } : {}),
    ...(httpAlone ? { httpRoutesAlone: true as const } : {}),
    reasons: Object.freeze(reasons),
    start: Math.min(a.start, b.start),
  });
}

/**
 * True when the request must resend every watched type even where nothing changed for a proxy: an operator's
 * push from `/debug/adsz?push=true` means "send everything again".
 */
export function isForced(request: PushRequest): boolean {
  return (request.reasons.debug ?? 0) > 0;
}

/** Total number of events a request stands for. */
export function eventCount(request: PushRequest): number {
  return Object.values(request.reasons).reduce((sum, n) => sum + (n ?? 0), 0);
}
