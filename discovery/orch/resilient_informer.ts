/**
 * One list-and-watch over an orchestrator path that never gives up: the client's informer lists, watches from
 * the listed version, relists on 410 Gone and reconnects a dropped watch; when it reports an error and stops,
 * it is started again after a backoff (doubling to 30 s, reset by a successful list). Lists go through the
 * QPS limiter. `onListed` fires once, after the first list's objects were delivered.
 *
 * A 404 means the orchestrator does not serve the path (a custom resource whose definition is not installed:
 * a cluster with only Istio's API groups, or only ours). It is not a failure to retry fast: it is logged once,
 * `onAbsent` fires, and the path is looked at again every `absentRecheckMs` (60 s by default) until it is served.
 *
 * @module
 */
import * as k8s from "@kubernetes/client-node";
import type { Logger } from "@mesh/shared/log/logger";
import { PEER_LOG_PERIOD_MS, PeerLogLimiter } from "@mesh/shared/log/peer_log_limiter";
import { systemTimers, type Timers } from "@mesh/shared/time/timers";
import type { RateLimiter } from "./rate_limiter.ts";

/** What a watched object carries at least. */
export type OrchObject = { metadata?: { name?: string; namespace?: string } };

/** The client and pacing shared by every informer. */
export interface InformerClient {
  readonly kubeConfig: k8s.KubeConfig;
  readonly limiter: RateLimiter;
  readonly log: Logger;
  /** First retry delay after a failure (default 1 s). */
  readonly retryMs?: number;
  /** How often a path the orchestrator does not serve (404) is looked at again (default 60 s). */
  readonly absentRecheckMs?: number;
  /** Timers of the retries and rechecks; the runtime's when absent. */
  readonly timers?: Timers;
  /** Told of every failed list or watch before its retry (a remote cluster's sync state reads it). */
  readonly onFailure?: (kind: string, error: unknown) => void;
}

/** One informer's path, list call and handlers. */
export interface InformerSpec {
  /** Names the watched kind in logs. */
  readonly what: string;
  /** The API path (`/api/v1/services`). */
  readonly path: string;
  /** The list call (a typed client's list of the same path). */
  readonly list: () => Promise<unknown>;
  readonly onAdd: (object: OrchObject) => void;
  readonly onUpdate: (object: OrchObject) => void;
  readonly onDelete: (object: OrchObject) => void;
  /** Called once, after the first list's objects were handed to `onAdd`. */
  readonly onListed?: () => void;
  /** Called when the orchestrator answers 404 for the path, and again after it was served in between. */
  readonly onAbsent?: () => void;
}

const MAX_RETRY_MS = 30_000;

/** How often a path the orchestrator does not serve is looked at again, unless the client says otherwise. */
export const ABSENT_RECHECK_MS = 60_000;

/** True for the client's answer to a 404: a typed call's `code`, a watch's `statusCode`. */
function isNotFound(error: unknown): boolean {
  const e = error as { code?: unknown; statusCode?: unknown } | null;
  return e !== null && typeof e === "object" && (e.code === 404 || e.statusCode === 404);
}

/** A running informer. */
export interface RunningInformer {
  stop(): Promise<void>;
}

/** Starts watching `spec.path`. */
export function startInformer(client: InformerClient, spec: InformerSpec): RunningInformer {
  const firstRetryMs = client.retryMs ?? 1_000;
  const clock = client.timers ?? systemTimers;
  let retry = firstRetryMs;
  let listed = false;
  let absent = false;
  let stopped = false;
  const timers = new Set<unknown>();
  const later = (ms: number, fn: () => void) => {
    const timer = clock.setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
  };
  // `onListed` and `onAbsent` run from a timer: what they throw would end the process, so it is logged.
  const unthrown = (event: string, handler: () => void) => {
    try {
      handler();
    } catch (error) {
      client.log.error("orchestrator informer handler failed", {
        kind: spec.what,
        event,
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      });
    }
  };
  const list = async () => {
    await client.limiter.acquire();
    const result = await spec.list();
    retry = firstRetryMs;
    if (absent) {
      absent = false;
      client.log.info("orchestrator now serves a kind it did not; watching it", { kind: spec.what });
    }
    if (!listed) {
      // The informer files the listed items right after this resolves.
      later(0, () => {
        if (listed || stopped) return;
        listed = true;
        unthrown("listed", () => spec.onListed?.());
      });
    }
    return result;
  };
  const informer = k8s.makeInformer(
    client.kubeConfig,
    spec.path,
    list as unknown as k8s.ListPromise<k8s.KubernetesObject>,
  );
  // A handler that throws on one object must not end the process nor the watch: the object is left out, and
  // the failure logged once a minute per kind, with how many more there were.
  const failures = new PeerLogLimiter(PEER_LOG_PERIOD_MS, () => clock.now());
  const guarded = (event: string, handler: (object: OrchObject) => void) => (o: unknown) => {
    const object = o as OrchObject;
    try {
      handler(object);
    } catch (error) {
      failures.log(
        spec.what,
        (notLogged) =>
          client.log.error("orchestrator object left out: handling it failed", {
            kind: spec.what,
            event,
            object: `${object?.metadata?.namespace ?? ""}/${object?.metadata?.name ?? ""}`,
            error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
            ...(notLogged > 0 && { notLogged }),
          }),
      );
    }
  };
  informer.on("add", guarded("add", spec.onAdd));
  informer.on("update", guarded("update", spec.onUpdate));
  informer.on("delete", guarded("delete", spec.onDelete));
  const begin = () => {
    if (!stopped) informer.start().catch(failed);
  };
  const failed = (error: unknown) => {
    if (stopped) return;
    if (isNotFound(error)) {
      const recheckMs = client.absentRecheckMs ?? ABSENT_RECHECK_MS;
      if (!absent) {
        absent = true;
        client.log.info(
          "orchestrator does not serve this kind (its definition is not installed); looking again",
          {
            kind: spec.what,
            path: spec.path,
            recheckMs,
          },
        );
        unthrown("absent", () => spec.onAbsent?.());
      }
      later(recheckMs, begin);
      return;
    }
    client.onFailure?.(spec.what, error);
    client.log.warn("orchestrator list or watch failed; retrying", {
      kind: spec.what,
      retryMs: retry,
      error: error instanceof Error ? error.message : String(error),
    });
    later(retry, begin);
    retry = Math.min(MAX_RETRY_MS, retry * 2);
  };
  // The informer reports a failed list or a broken watch here and stops.
  informer.on("error", failed);
  begin();
  return {
    async stop() {
      stopped = true;
      for (const timer of timers) clock.clearTimeout(timer);
      await informer.stop().catch(() => {});
    },
  };
}
