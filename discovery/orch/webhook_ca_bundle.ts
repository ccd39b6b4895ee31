/**
 * Keeps a webhook configuration pointing at this server: every webhook of the MutatingWebhookConfiguration
 * named by `INJECTION_WEBHOOK_CONFIG_NAME`, or of the ValidatingWebhookConfiguration named by
 * `VALIDATION_WEBHOOK_CONFIG_NAME`, carries the roots that sign the webhook's serving certificate as its
 * `clientConfig.caBundle`. The configuration is watched: it is patched when it appears, when someone edits it,
 * and when the roots change (`rootsChanged`). A configuration that does not exist is left alone until it does.
 *
 * The validating webhook starts with `failurePolicy: Ignore` and is switched to `Fail` once `failClosed()` says
 * so (the server is ready and the orchestrator's admission rejects invalid config, as the reference checks);
 * until then it looks again every `recheckMs`. Only the replica leading the validation controller duty writes.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import * as k8s from "@kubernetes/client-node";
import type { DutyGate } from "@mesh/shared/lifecycle/duty_gate";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import {
  type InformerClient,
  type OrchObject,
  type RunningInformer,
  startInformer,
} from "./resilient_informer.ts";
import { KeyedWorkQueue } from "./work_queue.ts";

/** Which of the two webhook configurations. */
export type WebhookConfigKind = "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration";

/** What the controller needs. */
export interface WebhookCaBundleOptions extends InformerClient {
  readonly kind: WebhookConfigKind;
  /** The configuration's name. */
  readonly name: string;
  /** The duty whose leader writes (`DUTIES.validationController`). */
  readonly gate: DutyGate;
  /** The roots (PEM) that sign the webhook's serving certificate; empty when none is known. */
  readonly caBundlePem: () => string;
  /** Validating only: true once the server may be called fail-closed. */
  readonly failClosed?: () => boolean | Promise<boolean>;
  /** How often a validating webhook not yet fail-closed is looked at again (default 1 s). */
  readonly recheckMs?: number;
  /** Where the validation controller's counters go (the validating configuration only, as the reference). */
  readonly metrics?: Metrics;
}

type WebhookEntry = {
  clientConfig?: { caBundle?: string };
  failurePolicy?: string;
};
type WebhookConfig = { metadata?: { name?: string; resourceVersion?: string }; webhooks?: WebhookEntry[] };

/** The reason the API server gave for a failed call, as the reference labels its error counter. */
function reasonOf(error: unknown): string {
  const body = (error as { body?: unknown }).body;
  const parsed = typeof body === "string"
    ? (() => {
      try {
        return JSON.parse(body) as { reason?: unknown };
      } catch {
        return undefined;
      }
    })()
    : body as { reason?: unknown } | undefined;
  return typeof parsed?.reason === "string" && parsed.reason !== "" ? parsed.reason : "Unknown";
}

function isNotFound(error: unknown): boolean {
  return (error as { code?: unknown }).code === 404;
}

/** Watches one webhook configuration and keeps its caBundle (and the validating one's failurePolicy). */
export class WebhookCaBundleController {
  readonly #options: WebhookCaBundleOptions;
  readonly #api: k8s.AdmissionregistrationV1Api;
  readonly #queue: KeyedWorkQueue;
  #informer?: RunningInformer;
  #release?: () => void;
  /** Whether the last look found no configuration, so the absence is logged once. */
  #missing = false;

  constructor(options: WebhookCaBundleOptions) {
    this.#options = options;
    this.#api = options.kubeConfig.makeApiClient(k8s.AdmissionregistrationV1Api);
    this.#queue = new KeyedWorkQueue(() => this.#reconcile(), options.log, options);
  }

  /** Watches the configuration while this replica leads the duty; returns at once. */
  start(): void {
    const path = this.#options.kind === "MutatingWebhookConfiguration"
      ? "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
      : "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
    const list = this.#options.kind === "MutatingWebhookConfiguration"
      ? () => this.#api.listMutatingWebhookConfiguration()
      : () => this.#api.listValidatingWebhookConfiguration();
    const changed = (object: OrchObject) => {
      if (object.metadata?.name === this.#options.name) this.reconcileSoon();
    };
    this.#release = this.#options.gate.whileLeading((signal) => {
      const informer = startInformer(this.#options, {
        what: this.#options.kind,
        path,
        list,
        onAdd: changed,
        onUpdate: changed,
        onDelete: changed,
        // The first look happens once the list is in, whether or not the configuration exists yet.
        onListed: () => this.reconcileSoon(),
      });
      this.#informer = informer;
      signal.addEventListener("abort", () => void informer.stop(), { once: true });
    });
  }

  /** The roots changed (rotation): patch the configuration again. */
  rootsChanged(): void {
    this.reconcileSoon();
  }

  /** Queues a look at the configuration (one at a time; a burst of calls is one look). */
  reconcileSoon(): void {
    if (this.#options.gate.leading()) this.#queue.add(this.#options.name);
  }

  /** Resolves when no look is queued or running. */
  idle(): Promise<void> {
    return this.#queue.idle();
  }

  /** Stops watching and writing. */
  async stop(): Promise<void> {
    this.#release?.();
    await this.#queue.stop();
    await this.#informer?.stop();
  }

  async #reconcile(): Promise<void> {
    const { name, kind, log } = this.#options;
    if (!this.#options.gate.leading()) return;
    const validating = kind === "ValidatingWebhookConfiguration";
    const pem = this.#options.caBundlePem();
    if (pem === "") {
      log.warn("no root certificate to put in the webhook configuration's caBundle", { kind, name });
      if (validating) this.#count("config_validation_config_load_error", "no root certificate");
      return;
    }
    const caBundle = Buffer.from(pem).toString("base64");
    // Reads the stored object, not the watch's copy: the write replaces it whole, with its resourceVersion.
    let current: WebhookConfig;
    try {
      await this.#options.limiter.acquire();
      current = validating
        ? await this.#api.readValidatingWebhookConfiguration({ name })
        : await this.#api.readMutatingWebhookConfiguration({ name });
    } catch (error) {
      if (!isNotFound(error)) throw this.#failed(error);
      if (!this.#missing) {
        log.info("webhook configuration not found; patching it once it exists", { kind, name });
      }
      this.#missing = true;
      return;
    }
    this.#missing = false;
    const failurePolicy = validating ? (await this.#options.failClosed?.() ? "Fail" : "Ignore") : undefined;
    if (failurePolicy === "Ignore") this.#queue.addAfter(name, this.#options.recheckMs ?? 1_000);
    let changed = false;
    for (const webhook of current.webhooks ?? []) {
      if (webhook.clientConfig?.caBundle !== caBundle) {
        webhook.clientConfig = { ...webhook.clientConfig, caBundle };
        changed = true;
      }
      if (failurePolicy !== undefined && webhook.failurePolicy !== failurePolicy) {
        webhook.failurePolicy = failurePolicy;
        changed = true;
      }
    }
    if (!changed) return;
    try {
      await this.#options.limiter.acquire();
      const updated = validating
        ? await this.#api.replaceValidatingWebhookConfiguration({
          name,
          body: current as k8s.V1ValidatingWebhookConfiguration,
        })
        : await this.#api.replaceMutatingWebhookConfiguration({
          name,
          body: current as k8s.V1MutatingWebhookConfiguration,
        });
      if (validating) this.#options.metrics?.counter("config_validation_config_updates").inc();
      log.info("webhook configuration patched", {
        kind,
        name,
        ...(failurePolicy ? { failurePolicy } : {}),
        resourceVersion: updated.metadata?.resourceVersion ?? "",
      });
    } catch (error) {
      throw this.#failed(error);
    }
  }

  /** Counts a failed call and returns an error naming it, to be retried. */
  #failed(error: unknown): Error {
    const reason = reasonOf(error);
    if (this.#options.kind === "ValidatingWebhookConfiguration") {
      this.#count("config_validation_config_update_error", reason);
    }
    return new Error(
      `Cannot patch ${this.#options.kind} "${this.#options.name}": ${reason} (${(error as Error).message})`,
      { cause: error },
    );
  }

  #count(metric: string, reason: string): void {
    this.#options.metrics?.counter(metric).inc({ reason });
  }
}
