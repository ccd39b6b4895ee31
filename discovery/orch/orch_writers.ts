import type * as k8s from "@kubernetes/client-node";
import { closingComponent, type Component } from "@mesh/shared/lifecycle";
import type { DutyGate } from "@mesh/shared/lifecycle/duty_gate";
import { type Logger, withFields } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import type { RateLimiter } from "./rate_limiter.ts";
import { invalidConfigProbe } from "./invalid_config_probe.ts";
import { RootCertConfigMaps } from "./root_cert_config_maps.ts";
import type { RemoteClusters } from "./remote_clusters.ts";
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
  /** The remote clusters whose webhooks and ConfigMaps are kept too (`EXTERNAL_MESHD`); absent: none. */
  readonly remoteClusters?: Pick<RemoteClusters, "attach">;
}

/** The validating configuration's name, with the namespace placeholder of the default filled in. */
export function validationConfigName(setting: string, namespace: string): string {
  return setting.replaceAll(NAMESPACE_PLACEHOLDER, namespace);
}

/**
 * The component that keeps the webhook configurations' caBundle and the root-certificate ConfigMaps in place,
 * each writing only while its duty is led. Listed after the webhook listener: the configurations point the
 * orchestrator at a server that answers. With `remoteClusters` (an external control plane, `EXTERNAL_MESHD`) the
 * same writers run against every remote cluster as well, each with that cluster's client, while it is added.
 */
export function orchWriters(o: OrchWritersOptions): Component {
  return closingComponent("orchestrator writers", () => {
    const writers = new Set<ClusterWriters>();
    const local = startClusterWriters(o, o.client);
    writers.add(local);
    const detach = o.remoteClusters?.attach((cluster) => {
      const remote = startClusterWriters(o, cluster.client, cluster.clusterId);
      writers.add(remote);
      return () => {
        writers.delete(remote);
        return remote.stop();
      };
    });
    const unsubscribe = o.onRootsChanged?.(() => {
      for (const w of writers) w.rootsChanged();
    });
    return [
      ...(unsubscribe ? [unsubscribe] : []),
      ...(detach ? [detach] : []),
      () => local.stop(),
    ];
  });
}

/** The writers of one cluster. */
interface ClusterWriters {
  rootsChanged(): void;
  stop(): Promise<void>;
}

/** Starts the webhook caBundle and root-certificate ConfigMap writers against one cluster's `client`. */
function startClusterWriters(
  o: OrchWritersOptions,
  orchClient: OrchWritersOptions["client"],
  clusterId?: string,
): ClusterWriters {
  const logs = clusterId === undefined ? o.log : {
    validation: withFields(o.log.validation, { cluster: clusterId }),
    namespaces: withFields(o.log.namespaces, { cluster: clusterId }),
  };
  const client = { ...orchClient, log: logs.validation };
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
      ...orchClient,
      log: logs.namespaces,
      gate: o.gates.namespaces,
      rootsPem: o.caRootsPem,
    })
    : undefined;
  for (const webhook of webhooks) webhook.start();
  configMaps?.start();
  return {
    rootsChanged() {
      for (const webhook of webhooks) webhook.rootsChanged();
      configMaps?.rootsChanged();
    },
    async stop() {
      await Promise.all([...webhooks.map((webhook) => webhook.stop()), configMaps?.stop()]);
    },
  };
}
