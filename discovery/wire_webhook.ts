/**
 * The injection and validation webhooks, wired for the composition root: the serving certificate named by
 * `--tlsCertFile` (read before any port opens), the HTTPS listener, and the orchestrator's writers that point
 * its webhook configurations at that listener and hand workloads the mesh's roots.
 *
 * @module
 */
import type { RunningServer, ServeLimits } from "@mesh/shared/http/serve";
import type { Router } from "@mesh/shared/http/router";
import type { Component } from "@mesh/shared/lifecycle";
import type { LogManager } from "@mesh/shared/log/log_manager";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import type { DiscoveryOptions } from "./cli/discovery_options.ts";
import type { DutyGates } from "./orch/duty_gates.ts";
import type { Orchestrator } from "./orch/orchestrator.ts";
import type { RemoteClusters } from "./orch/remote_clusters.ts";
import {
  loadServingTls,
  type ServingTls,
  startWebhookServer,
  type WebhookServer,
  webhookServingNames,
} from "./webhook/mod.ts";
import type { CaWiring } from "./wire_ca.ts";

/**
 * The certificate files named by `--tlsCertFile`/`--tlsKeyFile`, read and checked before any port opens;
 * undefined without them (the certificate comes from the CA later).
 */
export function loadWebhookTls(options: DiscoveryOptions, logs: LogManager): Promise<ServingTls | undefined> {
  return options.tlsCertFile || options.tlsKeyFile
    ? loadServingTls({
      tlsCertFile: options.tlsCertFile,
      tlsKeyFile: options.tlsKeyFile,
      servingNames: webhookServingNames(options.namespace),
      log: logs.scope("validationServer"),
    })
    : Promise.resolve(undefined);
}

/** What the webhook listener and the orchestrator's writers are wired to. */
export interface WebhookInputs {
  readonly options: DiscoveryOptions;
  /** The serving certificate read at startup, if `--tlsCertFile` names one. */
  readonly tls?: ServingTls;
  readonly certs: CaWiring;
  /** The injector's routes, once its component has started. */
  readonly injection: () => Router;
  /** Wraps the listener into a component that records its server. */
  readonly listener: (name: string, open: () => Promise<RunningServer>) => Component;
  readonly httpLimits: ServeLimits;
  readonly orch?: Orchestrator;
  readonly orchModule?: typeof import("./orch/mod.ts");
  readonly duties: DutyGates;
  /** The remote clusters whose webhooks and root ConfigMaps are written too (`EXTERNAL_MESHD`). */
  readonly remoteClusters?: RemoteClusters;
  /** True once every component is ready: writers point the orchestrator only at a server that answers. */
  readonly ready: () => boolean;
  readonly logs: LogManager;
  readonly metrics: Metrics;
}

/**
 * The HTTPS webhook listener, then (with an orchestrator) its writers, last: they point it at listeners that
 * answer; each writes while it leads.
 */
export function webhookComponents(w: WebhookInputs): Component[] {
  const { options, orch, duties, logs } = w;
  const { env } = options;
  let webhook: WebhookServer | undefined;
  return [
    w.listener("webhook", async () =>
      (webhook = await startWebhookServer({
        router: w.injection(),
        addr: options.httpsAddr,
        tlsCertFile: options.tlsCertFile,
        tlsKeyFile: options.tlsKeyFile,
        servingNames: webhookServingNames(options.namespace),
        ...(w.tls ? { tls: w.tls } : {}),
        ...(w.certs.issueServingCert ? { issue: w.certs.issueServingCert } : {}),
        validationEnabled: env.bool("VALIDATION_ENABLED"),
        limits: w.httpLimits,
        metrics: w.metrics,
        log: logs.scope("validationServer"),
      })).server),
    ...(orch
      ? [w.orchModule!.orchWriters({
        client: orch.client,
        injectionConfigName: env.bool("INJECT_ENABLED") ? env.string("INJECTION_WEBHOOK_CONFIG_NAME") : "",
        validationConfigName: env.bool("VALIDATION_ENABLED")
          ? env.string("VALIDATION_WEBHOOK_CONFIG_NAME")
          : "",
        namespace: options.namespace,
        webhookRootsPem: () => w.certs.webhookRootsPem(() => webhook?.tls.caPem),
        ...w.certs.configMapRoots(),
        ready: w.ready,
        gates: {
          validation: duties.gates.validationController,
          namespaces: duties.gates.namespaceController,
        },
        log: { validation: logs.scope("validationController"), namespaces: logs.scope("orch") },
        metrics: w.metrics,
        ...(w.remoteClusters ? { remoteClusters: w.remoteClusters } : {}),
      })]
      : []),
  ];
}
