/**
 * Leader election's Lease calls over the orchestrator client: each waits for a token of the client's rate limit
 * (`--orchApiQPS`/`--orchApiBurst`), and the API server's 404 and 409 become "none" and `LeaseConflictError`.
 *
 * @module
 */
import * as k8s from "@kubernetes/client-node";
import type { RateLimiter } from "./rate_limiter.ts";
import { type LeaseApi, LeaseConflictError, type LeaseRecord, type StoredLease } from "./lease_record.ts";

/** The `code` of a failed call, when the API server answered. */
function statusOf(error: unknown): number | undefined {
  return error instanceof k8s.ApiException ? error.code : undefined;
}

function toSpec(record: LeaseRecord): k8s.V1LeaseSpec {
  return {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    acquireTime: new k8s.V1MicroTime(record.acquireTime),
    renewTime: new k8s.V1MicroTime(record.renewTime),
    leaseTransitions: record.leaseTransitions,
  };
}

function fromLease(lease: k8s.V1Lease): StoredLease {
  const spec = lease.spec ?? {};
  const time = (t: Date | undefined) => t === undefined ? "" : new Date(t).toISOString();
  return {
    resourceVersion: lease.metadata?.resourceVersion ?? "",
    record: {
      holderIdentity: spec.holderIdentity ?? "",
      leaseDurationSeconds: spec.leaseDurationSeconds ?? 0,
      acquireTime: time(spec.acquireTime),
      renewTime: time(spec.renewTime),
      leaseTransitions: spec.leaseTransitions ?? 0,
    },
  };
}

/** Lease calls through `kubeConfig`, each after a token of `limiter`. */
export function orchLeaseApi(kubeConfig: k8s.KubeConfig, limiter: RateLimiter): LeaseApi {
  const api = kubeConfig.makeApiClient(k8s.CoordinationV1Api);
  const conflict = (namespace: string, name: string, error: unknown) =>
    statusOf(error) === 409 ? new LeaseConflictError(`${namespace}/${name}`, { cause: error }) : error;
  return {
    async get(namespace, name) {
      await limiter.acquire();
      try {
        return fromLease(await api.readNamespacedLease({ namespace, name }));
      } catch (error) {
        if (statusOf(error) === 404) return undefined;
        throw error;
      }
    },
    async create(namespace, name, record) {
      await limiter.acquire();
      try {
        return fromLease(
          await api.createNamespacedLease({
            namespace,
            body: { metadata: { name, namespace }, spec: toSpec(record) },
          }),
        );
      } catch (error) {
        throw conflict(namespace, name, error);
      }
    },
    async update(namespace, name, record, resourceVersion) {
      await limiter.acquire();
      try {
        return fromLease(
          await api.replaceNamespacedLease({
            namespace,
            name,
            body: { metadata: { name, namespace, resourceVersion }, spec: toSpec(record) },
          }),
        );
      } catch (error) {
        throw conflict(namespace, name, error);
      }
    },
  };
}
