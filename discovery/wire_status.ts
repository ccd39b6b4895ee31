/**
 * The writers of status and analysis, wired for the composition root: one status writer and budget for every
 * status field (distribution, analyzer messages, Ingress load balancers), each written by the leader of its
 * duty; and configuration analysis, whose results the debug interface shows and, with an orchestrator, the
 * analysis leader writes back.
 *
 * @module
 */
import { closingComponent, type Component } from "@mesh/shared/lifecycle";
import type { EnvSettings } from "@mesh/shared/env/env_settings";
import type { Logger } from "@mesh/shared/log/logger";
import type { LogManager } from "@mesh/shared/log/log_manager";
import type { MemoryConfigStore, MeshWatcher } from "./config/mod.ts";
import {
  allAnalyzers,
  AnalysisScheduler,
  type Analyzer,
  MemoryAnalysisSink,
  runnableAnalyzers,
  storeAnalysisInput,
} from "./analysis/mod.ts";
import { sidecarAnnotationProblem } from "./inject/annotation_validation.ts";
import type { Orchestrator } from "./orch/orchestrator.ts";
import type { DutyGates } from "./orch/duty_gates.ts";
import { IngressStatusSyncer } from "./orch/ingress_status.ts";
import type { AggregateRegistry } from "./registry/aggregate_registry.ts";
import type { SnapshotStage } from "./push/snapshot_stage.ts";
import {
  createDistributionStatus,
  type DistributionStatus,
  STATUS_REQUEST_TIMEOUT_MS,
  StatusWriter,
  ValidationMessagesSink,
} from "./status/mod.ts";

/** What the status and analysis writers read. */
export interface StatusWiringInputs {
  readonly env: EnvSettings;
  readonly orch?: Orchestrator;
  readonly duties: DutyGates;
  readonly store: MemoryConfigStore;
  readonly mesh: MeshWatcher;
  /** The server's namespace. */
  readonly namespace: string;
  /** `--domain`. */
  readonly domain: string;
  readonly logs: LogManager;
  readonly log: Logger;
}

/** The writers, built but not started, and the components that run them. */
export interface StatusWiring {
  /** Distribution status, when `DISCOVERY_ENABLE_STATUS` is on and the orchestrator is read. */
  readonly status?: DistributionStatus;
  /** The last analysis result, when `DISCOVERY_ENABLE_ANALYSIS` is on. */
  readonly analysis?: { readonly sink: MemoryAnalysisSink; readonly analyzers: readonly Analyzer[] };
  /** Analysis, run on every full snapshot the stage publishes (absent when off). */
  analysisComponent(snapshots: () => SnapshotStage): Component[];
  /** The status writer and the Ingress status syncer (none without an orchestrator). */
  writerComponents(registries: () => AggregateRegistry): Component[];
}

/** Builds the status writer, distribution status and analysis from the settings. */
export function wireStatus(w: StatusWiringInputs): StatusWiring {
  const { env, orch, duties } = w;
  // Distribution status needs a place to write (the orchestrator) and the ACKs the tracker keeps.
  if (env.bool("DISCOVERY_ENABLE_STATUS") && !orch) {
    w.log.warn("DISCOVERY_ENABLE_STATUS is on but no orchestrator is read: status has nowhere to go");
  }
  // Ingress status is written whenever the orchestrator is read, as the reference's ingress controller does.
  const statusHttp = orch ? orch.http(STATUS_REQUEST_TIMEOUT_MS) : undefined;
  // Every status field (distribution, and analyzer messages through `writeField`) shares one writer and budget.
  const statusWriter = statusHttp
    ? new StatusWriter({
      http: statusHttp,
      qps: env.float("DISCOVERY_STATUS_QPS"),
      burst: env.int("DISCOVERY_STATUS_BURST"),
      log: w.logs.scope("status"),
    })
    : undefined;
  const statusReporter = statusHttp ? env.string("POD_NAME") || Deno.hostname().toLowerCase() : "";
  const status = env.bool("DISCOVERY_ENABLE_STATUS") && statusHttp && statusWriter
    ? createDistributionStatus({
      http: statusHttp,
      writer: statusWriter,
      gate: duties.gates.statusController,
      reporter: statusReporter,
      namespace: w.namespace,
      log: w.logs.scope("status"),
      // Reports are named as liveness Leases when the replica's name is its election identity.
      ...(duties.liveness && statusReporter === duties.identity
        ? { liveness: duties.liveness.reader() }
        : {}),
    })
    : undefined;
  // With an orchestrator every analyzer runs, over its objects; in file mode only those that need mesh resources
  // alone. The status writer adds its sink beside the in-memory one the debug interface reads.
  const analysisSink = env.bool("DISCOVERY_ENABLE_ANALYSIS") ? new MemoryAnalysisSink() : undefined;
  const analysisObjects = analysisSink && orch ? orch.analysisObjects(w.namespace) : undefined;
  // With an orchestrator, the analysis leader also writes each resource's `status.validationMessages`.
  const validationSink = analysisSink && statusWriter
    ? new ValidationMessagesSink({
      writer: statusWriter,
      gate: duties.gates.analyzeController,
      resource: (key) => {
        const [kind, namespace, name] = key.split("/");
        return w.store.get(kind, namespace, name);
      },
    })
    : undefined;
  const analyzers = runnableAnalyzers(
    allAnalyzers({ validateAnnotation: sidecarAnnotationProblem }),
    analysisObjects !== undefined,
  );
  return {
    ...(status ? { status } : {}),
    ...(analysisSink ? { analysis: { sink: analysisSink, analyzers } } : {}),
    analysisComponent: (snapshots) =>
      analysisSink
        ? [closingComponent("analysis", () => {
          // Full snapshots only mark the state changed: runs are debounced and sliced, off the push path.
          const analysis = new AnalysisScheduler({
            input: () =>
              storeAnalysisInput({
                store: w.store,
                rootNamespace: () => w.mesh.current().rootNamespace,
                systemNamespace: w.namespace,
                meshNetworks: () => w.mesh.networks(),
                ...(analysisObjects ? { orchestrator: analysisObjects } : {}),
              }),
            analyzers,
            sinks: [analysisSink, ...(validationSink ? [validationSink] : [])],
            log: w.logs.scope("analysis"),
            ready: () => w.store.synced && analysisObjects?.synced !== false,
          });
          analysisObjects?.start();
          analysis.snapshot();
          return [
            ...(analysisObjects
              ? [() => analysisObjects.stop(), analysisObjects.onChange(() => analysis.snapshot())]
              : []),
            () => analysis.close(),
            snapshots().onPush((request) => {
              if (request.full) analysis.snapshot();
            }),
          ];
        })]
        : [],
    writerComponents: (registries) =>
      orch && statusWriter
        ? [
          { name: "status writer", start() {}, stop: () => statusWriter.stop() },
          closingComponent("ingress status", () => {
            const ingressNamespace = env.string("ORCH_INGRESS_NS") || "mesh-system";
            const aggregate = registries();
            const gatewayHost = () =>
              `${w.mesh.current().ingressService}.${ingressNamespace}.svc.${w.domain}`;
            const syncer = new IngressStatusSyncer({
              writer: statusWriter,
              gate: duties.gates.ingressController,
              ingresses: () => orch.ingress.meshIngresses(),
              addresses: () => aggregate.getService(gatewayHost(), ingressNamespace)?.externalAddresses ?? [],
            });
            const sync = () => syncer.sync();
            // Of every service event, only the gateway Service's can move the addresses.
            return [
              syncer.start(),
              orch.ingress.onTranslated(sync),
              aggregate.onServiceEvent((event) => {
                if (event.service.hostname === gatewayHost()) sync();
              }),
            ];
          }),
        ]
        : [],
  };
}
