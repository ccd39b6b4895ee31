/**
 * Gateway credentials from the orchestrator's Secrets: `credentialName` names a Secret in the gateway's
 * namespace holding `tls.crt`/`tls.key` (and `ca.crt` for MUTUAL), or the generic `cert`/`key`/`cacert`.
 * A Secret without a certificate and key is not a credential and is ignored.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type * as k8s from "@kubernetes/client-node";
import type { Logger } from "@mesh/shared/log/logger";
import { checkTlsCredential, tlsCredentialOf } from "@mesh/shared/credentials/tls_credential";
import type { SecretStore, TlsSecret } from "../model/secret_store.ts";
import type { RateLimiter } from "./rate_limiter.ts";
import { type RunningInformer, startInformer } from "./resilient_informer.ts";
import { rawList } from "./orch_raw_list.ts";

/** What the store needs. */
export interface OrchSecretStoreOptions {
  readonly kubeConfig: k8s.KubeConfig;
  readonly limiter: RateLimiter;
  readonly log: Logger;
  /** First retry delay after a failed list or watch, doubled up to 30 s. */
  readonly retryMs?: number;
  /** Called once for each new problem with a Secret (for a metric); the log line is written regardless. */
  readonly onProblem?: (key: string, message: string) => void;
}

type SecretObject = { metadata?: { name?: string; namespace?: string }; data?: Record<string, string> };

/** The TLS credential a Secret holds, if any. */
export function tlsSecretOf(object: SecretObject): TlsSecret | undefined {
  const raw = (object as SecretObject | null)?.data;
  const data: Record<string, unknown> = raw !== null && typeof raw === "object" ? raw : {};
  // A value that is not a string (a broken or hostile API server's) is absent, not a decoder's TypeError.
  return tlsCredentialOf((key) =>
    typeof data[key] !== "string" ? undefined : Buffer.from(data[key], "base64").toString("utf8")
  );
}

/** Watches Secrets and serves the TLS ones by namespace and name. */
export class OrchSecretStore implements SecretStore {
  readonly #options: OrchSecretStoreOptions;
  readonly #secrets = new Map<string, TlsSecret>();
  readonly #listeners = new Set<(namespace: string, name: string) => void>();
  readonly #eventListeners = new Set<(object: unknown, gone: boolean) => void>();
  readonly #listed = Promise.withResolvers<void>();
  /** The problem last reported per Secret, so each is logged and counted once. */
  readonly #problems = new Map<string, string>();
  #informer?: RunningInformer;

  constructor(options: OrchSecretStoreOptions) {
    this.#options = options;
  }

  get(namespace: string, name: string): TlsSecret | undefined {
    return this.#secrets.get(`${namespace}/${name}`);
  }

  onChange(listener: (namespace: string, name: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Calls `listener` with every Secret event as the orchestrator serves it, credential or not, so a reader of
   * other Secrets (analysis) shares this watch; returns the unsubscribe.
   */
  onSecretEvent(listener: (object: unknown, gone: boolean) => void): () => void {
    this.#eventListeners.add(listener);
    return () => this.#eventListeners.delete(listener);
  }

  /** Resolves once the first list's Secrets were delivered. */
  get listed(): Promise<void> {
    return this.#listed.promise;
  }

  /** Starts watching; returns at once. */
  start(): void {
    const changed = (object: SecretObject, gone: boolean) => {
      for (const listener of this.#eventListeners) listener(object, gone);
      const namespace = object.metadata?.namespace ?? "default";
      const name = object.metadata?.name ?? "";
      const key = `${namespace}/${name}`;
      const secret = gone ? undefined : tlsSecretOf(object);
      if (secret !== undefined && !this.#usable(key, secret)) return;
      this.#problems.delete(key);
      const had = this.#secrets.has(key);
      if (secret === undefined) this.#secrets.delete(key);
      else this.#secrets.set(key, secret);
      if (had || secret !== undefined) { for (const listener of this.#listeners) listener(namespace, name); }
    };
    this.#informer = startInformer(this.#options, {
      what: "Secrets",
      path: "/api/v1/secrets",
      list: rawList(this.#options.kubeConfig, "/api/v1/secrets"),
      onAdd: (o) => changed(o as SecretObject, false),
      onUpdate: (o) => changed(o as SecretObject, false),
      onDelete: (o) => changed(o as SecretObject, true),
      onListed: () => this.#listed.resolve(),
    });
  }

  /**
   * Whether a credential's parts are certificates and a key. One that is not is refused alone and reported
   * once; the version served before (if any) stays, so a bad edit never takes a gateway's TLS away.
   */
  #usable(key: string, secret: TlsSecret): boolean {
    try {
      checkTlsCredential(secret, `Secret ${key}`);
      return true;
    } catch (error) {
      const message = `${(error as Error).message}; keeping the last good credential`;
      if (this.#problems.get(key) !== message) {
        this.#problems.set(key, message);
        this.#options.log.warn(message, { secret: key });
        this.#options.onProblem?.(key, message);
      }
      return false;
    }
  }

  /** Stops watching. */
  async stop(): Promise<void> {
    await this.#informer?.stop();
  }
}
