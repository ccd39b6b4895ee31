import type * as k8s from "@kubernetes/client-node";
import { closingComponent, type Component } from "../../shared/lifecycle/mod.ts";
import type { DutyGate } from "../../shared/lifecycle/duty_gate.ts";
import type { Logger } from "../../shared/log/logger.ts";
import type { Metrics } from "../../shared/metrics/metrics.ts";
import type { RateLimiter } from "./orch_client.ts";
import { invalidConfigProbe } from "./invalid_config_probe.ts";
import { RootCertConfigMaps } from "./root_cert_config_maps.ts";
import { WebhookCaBundleController } from "./webhook_ca_bundle.ts";

/** The placeholder `VALIDATION_WEBHOOK_CONFIG_NAME`'s default carries for the server's namespace. */
const NAMESPACE_PLACEHOLDER = "${namespace}";

/** What the orchestrator writers are built from; getters read what earlier components built. */
export interface OrchWritersOptions {
  readonly client: { readonly kubeConfig: k8s.KubeConfig; readonly limiter: RateLimiter };
  /** `INJECTION_WEBHOOK_CONFIG_NAME` when `INJECT_ENABLED`, else empty: no mutating configuration is kept. */
  readonly injectionConfigName: string;
  /** `VALIDATION_WEBHOOK_CONFIG_NAME` when `VALIDATION_ENABLED`, else empty; `${namespace}` is replaced. */
  readonly validationConfigName: string;
  /** The server's namespace (`POD_NAMESPACE`). */
  readonly namespace: string;
  /** The roots that sign the webhook's serving certificate, PEM. */
  readonly webhookRootsPem: () => string;
  /** The CA's roots for every namespace's ConfigMap; absent without the CA (no ConfigMaps then). */
  readonly caRootsPem?: () => string;
  /** Subscribes to root changes (the CA's rotation); returns the unsubscribe function. */
  readonly onRootsChanged?: (listener: () => void) => () => void;
  /** True once the server is ready (the validating webhook goes fail-closed only after). */
  readonly ready: () => boolean;
  /** The duty gates of the two controllers (`DUTIES.validationController`, `DUTIES.namespaceController`). */
  readonly gates: { readonly validation: DutyGate; readonly namespaces: DutyGate };
  readonly log: { readonly validation: Logger; readonly namespaces: Logger };
  readonly metrics: Metrics;
}

/** The validating configuration's name, with the namespace placeholder of the default filled in. */
export function validationConfigName(setting: string, namespace: string): string {
  return setting.replaceAll(NAMESPACE_PLACEHOLDER, namespace);
}

/**
 * The component that keeps the webhook configurations' caBundle and the root-certificate ConfigMaps in place,
 * each writing only while its duty is led. Listed after the webhook listener: the configurations point the
 * orchestrator at a server that answers.
 */
export function orchWriters(o: OrchWritersOptions): Component {
  return closingComponent("orchestrator writers", () => {
    const client = { ...o.client, log: o.log.validation };
    const rejectsInvalidConfig = invalidConfigProbe(client, o.namespace);
    const webhooks: WebhookCaBundleController[] = [];
    if (o.injectionConfigName !== "") {
      webhooks.push(
        new WebhookCaBundleController({
          ...client,
          kind: "MutatingWebhookConfiguration",
          name: o.injectionConfigName,
          gate: o.gates.validation,
          caBundlePem: o.webhookRootsPem,
        }),
      );
    }
    if (o.validationConfigName !== "") {
      webhooks.push(
        new WebhookCaBundleController({
          ...client,
          kind: "ValidatingWebhookConfiguration",
          name: validationConfigName(o.validationConfigName, o.namespace),
          gate: o.gates.validation,
          caBundlePem: o.webhookRootsPem,
          // Fail-closed once the server is ready and invalid config is refused through the orchestrator.
          failClosed: async () => o.ready() && await rejectsInvalidConfig(),
          metrics: o.metrics,
        }),
      );
    }
    const configMaps = o.caRootsPem
      ? new RootCertConfigMaps({
        ...o.client,
        log: o.log.namespaces,
        gate: o.gates.namespaces,
        rootsPem: o.caRootsPem,
      })
      : undefined;
    for (const webhook of webhooks) webhook.start();
    configMaps?.start();
    const unsubscribe = o.onRootsChanged?.(() => {
      for (const webhook of webhooks) webhook.rootsChanged();
      configMaps?.rootsChanged();
    });
    return [
      ...(unsubscribe ? [unsubscribe] : []),
      ...webhooks.map((webhook) => () => webhook.stop()),
      ...(configMaps ? [() => configMaps.stop()] : []),
    ];
  });
}
