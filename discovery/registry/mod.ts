/**
 * Service registries behind one interface: the aggregate, the Mock (in-memory) registry, the ServiceEntry
 * registry with WorkloadEntry selection and WorkloadGroup auto-registration, and the `--registries` builder
 * (where the orchestrator registry plugs in as a factory).
 * @module
 */
export * from "./service_registry.ts";
export * from "./aggregate_registry.ts";
export * from "./memory_registry.ts";
export * from "./build_registries.ts";
export * from "./serviceentry/service_entry_registry.ts";
export * from "./serviceentry/auto_registered_entry.ts";
export * from "./serviceentry/workload_auto_registration.ts";
export type { InterceptionMode, Proxy, ProxyLocality, ProxyMetadata, ProxyType } from "../model/proxy.ts";
export type {
  ProviderId,
  Service,
  ServiceAttributes,
  ServicePort,
  ServiceProtocol,
  ServiceResolution,
} from "../model/service.ts";
export type { Endpoint, EndpointLocality, EndpointTlsMode, ServiceInstance } from "../model/endpoint.ts";
