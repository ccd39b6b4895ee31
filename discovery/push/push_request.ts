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

/** True when `configsUpdated` is known, not empty, and names configs of `kinds` alone. */
export function onlyKinds(
  configsUpdated: ReadonlySet<string> | undefined,
  kinds: ReadonlySet<string>,
): boolean {
  if (configsUpdated === undefined || configsUpdated.size === 0) return false;
  for (const key of configsUpdated) if (!kinds.has(kindOfKey(key))) return false;
  return true;
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
 * configsUpdated unless either means "anything" (undefined), in which case the merge does too.
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
  return Object.freeze({
    full: a.full || b.full,
    ...(configs ? { configsUpdated: configs } : {}),
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
