/**
 * Port-bound egress listeners of a Sidecar: an egress listener with a `port` decides which services a sidecar
 * reaches on that port; the listener without a port (the catch-all) decides for every other port. A scope
 * without port-bound listeners (the default, or a Sidecar with one catch-all) behaves as before.
 *
 * @module
 */
import type { Service } from "../../model/service.ts";
import type { SidecarScope } from "../../push/sidecar_scope.ts";

const memo = new WeakMap<SidecarScope, Map<number, ReadonlySet<Service>>>();

/** The services the scope reaches on outbound `port`. */
export function egressServicesForPort(scope: SidecarScope, port: number): ReadonlySet<Service> {
  let byPort = memo.get(scope);
  if (byPort === undefined) memo.set(scope, byPort = new Map());
  let services = byPort.get(port);
  if (services === undefined) {
    const listener = scope.egress.find((e) => e.port?.number === port) ??
      scope.egress.find((e) => e.port === undefined);
    services = new Set(listener?.services ?? []);
    byPort.set(port, services);
  }
  return services;
}

/** True when the scope has egress listeners bound to ports (only then is per-port filtering needed). */
export function hasPortBoundEgress(scope: SidecarScope): boolean {
  return scope.egress.some((e) => e.port !== undefined);
}
