import type { Metrics } from "@mesh/shared/metrics/metrics";
import type { ConfigEvent, ConfigStore } from "../model/config_store.ts";
import { isHeadlessPassthrough, type Service } from "../model/service.ts";
import type { EndpointEvent, ServiceEvent } from "../registry/service_registry.ts";
import type { EndpointIndex } from "./endpoint_index.ts";
import { configKey, type PushRequest, pushRequest, serviceKey } from "./push_request.ts";

/** Kinds the ServiceEntry registry turns into service and endpoint events; their config events push nothing. */
export const REGISTRY_KINDS: ReadonlySet<string> = new Set([
  "ServiceEntry",
  "WorkloadEntry",
  "WorkloadGroup",
]);

/** Where change events come from and where the push requests go. */
export interface ChangeEventSources {
  /** Config store whose resource events become push requests. */
  readonly store: ConfigStore;
  /** Service registry whose service and endpoint events become push requests. */
  readonly registry: {
    onServiceEvent(handler: (event: ServiceEvent) => void): () => void;
    onEndpointEvent(handler: (event: EndpointEvent) => void): () => void;
    getService(hostname: string, namespace?: string): Service | undefined;
  };
  /** Versioned endpoints, updated before an endpoint push is requested. */
  readonly endpoints: EndpointIndex;
  /** Usually `debouncer.enqueue`. */
  readonly enqueue: (request: PushRequest) => void;
  /** Where event counts are recorded; none when absent. */
  readonly metrics?: Metrics;
  /**
   * `DISCOVERY_ENABLE_HEADLESS_SERVICE_POD_LISTENERS`: sidecars listen on each endpoint of a headless service,
   * so its endpoint changes are full pushes (default false here: the pipeline passes the setting).
   */
  readonly headlessPodListeners?: boolean;
}

/** Turns every change into push requests; `meshChanged` is for the mesh config watcher. */
export interface ChangeEvents {
  /** Requests a full push for a changed mesh config (reason `global`, anything may have changed). */
  meshChanged(): void;
  /** Requests a full push for a changed gateway credential (reason `secret`); drops its cached SDS resource. */
  secretChanged(namespace: string, name: string): void;
  /** Unsubscribes from every source. */
  close(): void;
}

/**
 * Connects config and registry events to push requests, counting each in `discovery_inbound_updates`:
 * config changes (other than registry kinds) are full pushes of that config; service changes are full pushes
 * of the service; endpoint changes update the endpoint index and, when something changed, are endpoint-only
 * pushes, except for DNS services, whose endpoints live in CDS, and, with per-pod listeners, headless services,
 * whose endpoints are listeners: both need a full push.
 */
export function connectChangeEvents(sources: ChangeEventSources): ChangeEvents {
  const inbound = (type: string) => sources.metrics?.counter("discovery_inbound_updates").inc({ type });
  const offConfig = sources.store.onEvent((event: ConfigEvent) => {
    inbound("config");
    const { gvk, meta } = event.resource;
    if (REGISTRY_KINDS.has(gvk.kind)) return;
    sources.enqueue(
      pushRequest(true, "config", [configKey(gvk.kind, meta.namespace, meta.name)], performance.now()),
    );
  });
  const offService = sources.registry.onServiceEvent((event) => {
    inbound(event.type === "delete" ? "svcdelete" : "svc");
    const { hostname, namespace } = event.service;
    sources.endpoints.update({ hostname, namespace });
    sources.enqueue(pushRequest(true, "service", [serviceKey(namespace, hostname)], performance.now()));
  });
  const offEndpoint = sources.registry.onEndpointEvent((event) => {
    inbound("eds");
    if (!sources.endpoints.update(event)) return;
    const service = sources.registry.getService(event.hostname, event.namespace);
    const full = service !== undefined &&
      (service.resolution === "DNSLB" ||
        (sources.headlessPodListeners === true && isHeadlessPassthrough(service)));
    sources.enqueue(
      pushRequest(full, "endpoint", [serviceKey(event.namespace, event.hostname)], performance.now()),
    );
  });
  return {
    meshChanged() {
      inbound("config");
      sources.enqueue(pushRequest(true, "global", undefined, performance.now()));
    },
    secretChanged(namespace: string, name: string) {
      inbound("secret");
      sources.enqueue(pushRequest(true, "secret", [configKey("Secret", namespace, name)], performance.now()));
    },
    close() {
      offConfig();
      offService();
      offEndpoint();
    },
  };
}
