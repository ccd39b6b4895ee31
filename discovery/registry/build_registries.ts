import type { Logger } from "@mesh/shared/log/logger";
import type { ConfigStore } from "../model/config_store.ts";
import { AggregateRegistry } from "./aggregate_registry.ts";
import { createMockRegistry } from "./memory_registry.ts";
import type { ServiceRegistry } from "./service_registry.ts";
import { ServiceEntryRegistry } from "./serviceentry/service_entry_registry.ts";
import type { WorkloadSource } from "./workload_source.ts";

/** A platform registry named by `--registries` that this build cannot create. */
export class UnavailableRegistryError extends Error {
  /** `registry` is the name given in `--registries`. */
  constructor(readonly registry: string) {
    super(
      `Registry "${registry}" in --registries is not available in this build: expected "Mock", or supply ` +
        `an "${registry}" factory`,
    );
    this.name = "UnavailableRegistryError";
  }
}

/** Creates the registry of one platform (`--registries` entry) for the local cluster. */
export type RegistryFactory = (clusterId: string) => ServiceRegistry;

/** What buildRegistries needs. */
export interface BuildRegistriesOptions {
  /** Pods ServiceEntries may select (the orchestrator's, with `DISCOVERY_ENABLE_SERVICEENTRY_SELECT_PODS`). */
  readonly pods?: WorkloadSource;
  /** `--registries`, in order: earlier entries take precedence for a hostname. */
  readonly registries: readonly string[];
  /** `--clusterID` (or CLUSTER_ID). */
  readonly clusterId: string;
  /** `--appNamespace`. */
  readonly appNamespaces: readonly string[];
  /** Mesh `defaultServiceExportTo`, read when ServiceEntries are converted. */
  readonly defaultServiceExportTo: () => readonly string[];
  /** The config store the ServiceEntry registry reads ServiceEntries and WorkloadEntries from. */
  readonly store: ConfigStore;
  /** Logger of the registries. */
  readonly log: Logger;
  /**
   * Factories of platform registries beyond Mock, by `--registries` name. The orchestrator registry plugs in
   * here as `{ Orchestrator: (clusterId) => new OrchestratorRegistry(...) }` when it exists.
   */
  readonly factories?: Readonly<Record<string, RegistryFactory>>;
}

/** The registries of a discovery server: the aggregate, and the ServiceEntry registry to start. */
export interface Registries {
  /** Merges every registry; what the push pipeline reads. */
  readonly aggregate: AggregateRegistry;
  /** Services and endpoints from ServiceEntries and WorkloadEntries; to be started by the caller. */
  readonly serviceEntries: ServiceEntryRegistry;
  /** The Mock registry when `--registries` names it, for feeding services by code. */
  readonly mock?: ServiceRegistry;
}

/**
 * Builds the aggregate registry: the platform registries in `--registries` order, then the ServiceEntry
 * registry (so a platform's own service wins over a ServiceEntry for the same hostname and namespace).
 *
 * @throws {UnavailableRegistryError} for a `--registries` name without a factory.
 */
export function buildRegistries(options: BuildRegistriesOptions): Registries {
  const aggregate = new AggregateRegistry(options.clusterId);
  let mock: ServiceRegistry | undefined;
  for (const name of options.registries) {
    if (name === "Mock") {
      mock = createMockRegistry(options.clusterId);
      aggregate.addRegistry(mock);
      continue;
    }
    const factory = options.factories?.[name];
    if (!factory) throw new UnavailableRegistryError(name);
    aggregate.addRegistry(factory(options.clusterId));
  }
  const serviceEntries = new ServiceEntryRegistry(options.store, {
    clusterId: options.clusterId,
    appNamespaces: options.appNamespaces,
    defaultExportTo: options.defaultServiceExportTo,
    log: options.log,
    ...(options.pods ? { pods: options.pods } : {}),
  });
  aggregate.addRegistry(serviceEntries);
  return { aggregate, serviceEntries, ...(mock ? { mock } : {}) };
}
