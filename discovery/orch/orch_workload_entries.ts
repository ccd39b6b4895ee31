/**
 * Auto-registered WorkloadEntries written through the orchestrator's API (`networking.mesh.io`), each call after
 * a token of the client's rate limit; 409 becomes `WorkloadEntryConflictError`, a delete of an entry already
 * gone succeeds, and every write names the version it read.
 *
 * @module
 */
import * as k8s from "@kubernetes/client-node";
import { NETWORKING_GROUP } from "@mesh/shared/config/kinds";
import type { Resource } from "@mesh/shared/config/resource";
import type { WorkloadEntrySpec } from "@mesh/shared/config/networking/workload_entry";
import { WorkloadEntryConflictError, type WorkloadEntryWriter } from "../model/workload_entry_writer.ts";
import type { RateLimiter } from "./rate_limiter.ts";

const VERSION = "v1alpha3";
const PLURAL = "workloadentries";

type EntryObject = {
  metadata?: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    resourceVersion?: string;
  };
  spec?: WorkloadEntrySpec;
};

function statusOf(error: unknown): number | undefined {
  return error instanceof k8s.ApiException ? error.code : undefined;
}

function toObject(entry: Resource<WorkloadEntrySpec>, resourceVersion?: string): EntryObject {
  return {
    apiVersion: `${NETWORKING_GROUP}/${VERSION}`,
    kind: "WorkloadEntry",
    metadata: {
      name: entry.meta.name,
      namespace: entry.meta.namespace,
      ...(entry.meta.labels ? { labels: { ...entry.meta.labels } } : {}),
      ...(entry.meta.annotations ? { annotations: { ...entry.meta.annotations } } : {}),
      ...(resourceVersion !== undefined ? { resourceVersion } : {}),
    },
    spec: entry.spec,
  } as EntryObject;
}

function fromObject(object: EntryObject): Resource<WorkloadEntrySpec> {
  const metadata = object.metadata ?? {};
  return {
    gvk: { group: NETWORKING_GROUP, version: VERSION, kind: "WorkloadEntry" },
    meta: {
      name: metadata.name ?? "",
      namespace: metadata.namespace ?? "default",
      ...(metadata.labels ? { labels: metadata.labels } : {}),
      ...(metadata.annotations ? { annotations: metadata.annotations } : {}),
    },
    spec: object.spec ?? { address: "" },
  };
}

/** WorkloadEntry calls through `kubeConfig`, each after a token of `limiter`. */
export function orchWorkloadEntryWriter(
  kubeConfig: k8s.KubeConfig,
  limiter: RateLimiter,
): WorkloadEntryWriter {
  const api = kubeConfig.makeApiClient(k8s.CustomObjectsApi);
  const where = (namespace: string, name: string) => ({
    group: NETWORKING_GROUP,
    version: VERSION,
    plural: PLURAL,
    namespace,
    name,
  });
  const conflict = (namespace: string, name: string, error: unknown) =>
    statusOf(error) === 409
      ? new WorkloadEntryConflictError(`${namespace}/${name}`, { cause: error })
      : error;
  return {
    async get(namespace, name) {
      await limiter.acquire();
      try {
        const object = await api.getNamespacedCustomObject(where(namespace, name)) as EntryObject;
        return { entry: fromObject(object), resourceVersion: object.metadata?.resourceVersion ?? "" };
      } catch (error) {
        if (statusOf(error) === 404) return undefined;
        throw error;
      }
    },
    async create(entry) {
      await limiter.acquire();
      const { namespace, name } = entry.meta;
      try {
        await api.createNamespacedCustomObject({
          group: NETWORKING_GROUP,
          version: VERSION,
          plural: PLURAL,
          namespace,
          body: toObject(entry),
        });
      } catch (error) {
        throw conflict(namespace, name, error);
      }
    },
    async update(entry, resourceVersion) {
      await limiter.acquire();
      const { namespace, name } = entry.meta;
      try {
        await api.replaceNamespacedCustomObject({
          ...where(namespace, name),
          body: toObject(entry, resourceVersion),
        });
      } catch (error) {
        throw conflict(namespace, name, error);
      }
    },
    async delete(namespace, name, resourceVersion) {
      await limiter.acquire();
      try {
        await api.deleteNamespacedCustomObject({
          ...where(namespace, name),
          body: { preconditions: { resourceVersion } },
        });
      } catch (error) {
        if (statusOf(error) === 404) return;
        throw conflict(namespace, name, error);
      }
    },
  };
}
