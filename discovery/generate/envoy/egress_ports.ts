/**
 * Port-bound egress listeners of a Sidecar: an egress listener with a `port` decides which services a sidecar
 * reaches on that port; the listener without a port (the catch-all) decides for every other port. A scope
 * without port-bound listeners (the default, or a Sidecar with one catch-all) behaves as before.
 *
 * @module
 */
import type { Service } from "../../model/service.ts";
import type { SidecarScope } from "../../push/sidecar_scope.ts";
import type { PushContext } from "../../push/push_context.ts";
import { derivedTable } from "../../push/derived_memo.ts";

const PORT_SERVICES = derivedTable<SidecarScope, number, ReadonlySet<Service>>("egressPortServices");

/** The services the scope (one of `push`'s) reaches on outbound `port`. */
export function egressServicesForPort(
  push: PushContext,
  scope: SidecarScope,
  port: number,
): ReadonlySet<Service> {
  return push.derived.get(PORT_SERVICES, scope, port, () => {
    const listener = scope.egress.find((e) => e.port?.number === port) ??
      scope.egress.find((e) => e.port === undefined);
    return new Set(listener?.services ?? []);
  });
}

/** True when the scope has egress listeners bound to ports (only then is per-port filtering needed). */
export function hasPortBoundEgress(scope: SidecarScope): boolean {
  return scope.egress.some((e) => e.port !== undefined);
}
