/**
 * Where auto-registered WorkloadEntries are written: the orchestrator's API when it is read, else the config
 * store. Writes name the version they read, so two replicas never overwrite each other's marks unseen.
 *
 * @module
 */
import type { Resource } from "@mesh/shared/config/resource";
import type { WorkloadEntrySpec } from "@mesh/shared/config/networking/workload_entry";
import type { WritableConfigStore } from "./config_store.ts";

/** A WorkloadEntry as last read, and the version a write must name. */
export interface StoredWorkloadEntry {
  readonly entry: Resource<WorkloadEntrySpec>;
  readonly resourceVersion: string;
}

/** A write found the entry changed (or, for a create, present) since it was read (409). */
export class WorkloadEntryConflictError extends Error {
  /** `entry` is `namespace/name`. */
  constructor(readonly entry: string, options?: ErrorOptions) {
    super(`WorkloadEntry ${entry} was written by someone else since it was read; read it again`, options);
    this.name = "WorkloadEntryConflictError";
  }
}

/** The WorkloadEntry calls auto-registration makes. */
export interface WorkloadEntryWriter {
  /** The entry as stored now, or undefined when there is none. */
  get(namespace: string, name: string): Promise<StoredWorkloadEntry | undefined>;
  /**
   * Creates the entry.
   *
   * @throws {WorkloadEntryConflictError} when it exists
   */
  create(entry: Resource<WorkloadEntrySpec>): Promise<void>;
  /**
   * Replaces the entry if it is still at `resourceVersion`.
   *
   * @throws {WorkloadEntryConflictError} when it is not
   */
  update(entry: Resource<WorkloadEntrySpec>, resourceVersion: string): Promise<void>;
  /**
   * Deletes the entry if it is still at `resourceVersion`; an entry already gone is no error.
   *
   * @throws {WorkloadEntryConflictError} when it changed
   */
  delete(namespace: string, name: string, resourceVersion: string): Promise<void>;
}

/** Writes into the config store: a replica of files, alone. */
export function storeWorkloadEntryWriter(store: WritableConfigStore): WorkloadEntryWriter {
  const read = (namespace: string, name: string): StoredWorkloadEntry | undefined => {
    const entry = store.get("WorkloadEntry", namespace, name) as Resource<WorkloadEntrySpec> | undefined;
    return entry === undefined ? undefined : { entry, resourceVersion: entry.meta.resourceVersion ?? "" };
  };
  const check = (namespace: string, name: string, resourceVersion: string | undefined) => {
    const current = read(namespace, name);
    if (
      resourceVersion === undefined ? current !== undefined : current?.resourceVersion !== resourceVersion
    ) {
      throw new WorkloadEntryConflictError(`${namespace}/${name}`);
    }
  };
  return {
    get: (namespace, name) => Promise.resolve(read(namespace, name)),
    create(entry) {
      check(entry.meta.namespace, entry.meta.name, undefined);
      store.apply(entry);
      return Promise.resolve();
    },
    update(entry, resourceVersion) {
      check(entry.meta.namespace, entry.meta.name, resourceVersion);
      store.apply(entry);
      return Promise.resolve();
    },
    delete(namespace, name, resourceVersion) {
      if (read(namespace, name) === undefined) return Promise.resolve();
      check(namespace, name, resourceVersion);
      store.delete("WorkloadEntry", namespace, name);
      return Promise.resolve();
    },
  };
}
