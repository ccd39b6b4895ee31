import type { EnvSettings } from "@mesh/shared/env/env_settings";
import type { Logger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import type { ConfigStore } from "../model/config_store.ts";
import type { AggregateRegistry } from "../registry/aggregate_registry.ts";
import { type ChangeEvents, connectChangeEvents } from "./change_events.ts";
import { PushDebouncer } from "./push_debouncer.ts";
import { EndpointIndex } from "./endpoint_index.ts";
import { buildPushContext, type ListenerPlugins, type PushMeshConfig } from "./push_context.ts";
import type { SecretStore } from "../model/secret_store.ts";
import { SnapshotStage } from "./snapshot_stage.ts";
import { SyncGate } from "./sync_gate.ts";
import { pushRequest } from "./push_request.ts";
import { DerivedMemo } from "./derived_memo.ts";
import { MeshNetworkIndex } from "./network_index.ts";
import type { MeshNetworks } from "@mesh/shared/config/mesh/mesh_networks";

/** What the push pipeline is assembled from. */
export interface PushPipelineOptions {
  /** Config resources; its events trigger pushes and snapshots read it. */
  readonly store: ConfigStore;
  /** Every service registry; its events trigger pushes and snapshots read it. */
  readonly registry: AggregateRegistry;
  /** The mesh config in effect, read at every snapshot build. */
  readonly mesh: () => PushMeshConfig;
  /** `--domain`. */
  readonly domain: string;
  /** Read once: the DISCOVERY_DEBOUNCE_*, EDS debounce, gateway scoping, delegate and Envoy generation settings. */
  readonly env: EnvSettings;
  /** Where debounce, push and snapshot metrics are recorded; none when absent. */
  readonly metrics?: Metrics;
  /** Logger of the pipeline's stages. */
  readonly log: Logger;
  /** Gateway credentials, handed to every snapshot. */
  readonly secrets?: SecretStore;
  /** `--plugins`; the reference's defaults when absent. */
  readonly plugins?: ListenerPlugins;
  /** The mesh networks in effect (`--networksConfig`), read at every snapshot build; none when absent. */
  readonly networks?: () => MeshNetworks;
  /** Why the config and registry sources have not all synced, or undefined once they have; always synced when absent. */
  readonly unsynced?: () => string | undefined;
}

/** The assembled stages: events → debouncer → snapshot stage → listeners (`stage.onPush`). */
export interface PushPipeline {
  /** Versioned endpoints, kept current by registry events; each snapshot holds the frozen copy it was handed. */
  readonly endpoints: EndpointIndex;
  /** Merges push requests within the debounce window. */
  readonly debouncer: PushDebouncer;
  /** Builds snapshots and hands each push request to its listeners. */
  readonly stage: SnapshotStage;
  /** The subscriptions that turn store and registry events into push requests. */
  readonly changes: ChangeEvents;
  /** Opens once a snapshot built after every source synced is published; streams wait for it. */
  readonly gate: SyncGate;
  /** Stops taking events and drops pending requests. */
  close(): void;
}

/**
 * Assembles the push pipeline: config and registry events become push requests, the debouncer merges them,
 * the snapshot stage builds a PushContext for full pushes and hands each request to its listeners (the xDS
 * server subscribes with `stage.onPush`). The first snapshot is built at once.
 */
export function createPushPipeline(options: PushPipelineOptions): PushPipeline {
  const { env, registry, store } = options;
  const endpoints = new EndpointIndex(registry);
  const scopeGatewayToNamespace = env.bool("DISCOVERY_SCOPE_GATEWAY_TO_NAMESPACE");
  const enableVirtualServiceDelegate = env.bool("DISCOVERY_ENABLE_VIRTUAL_SERVICE_DELEGATE");
  const outboundHttp = Object.freeze({
    http10: env.bool("DISCOVERY_HTTP10"),
    useRemoteAddress: env.bool("DISCOVERY_SIDECAR_USE_REMOTE_ADDRESS"),
  });
  const protocolSniffing = Object.freeze({
    outbound: env.bool("DISCOVERY_ENABLE_PROTOCOL_SNIFFING_FOR_OUTBOUND"),
    inbound: env.bool("DISCOVERY_ENABLE_PROTOCOL_SNIFFING_FOR_INBOUND"),
    inboundTimeoutMs: env.durationMs("DISCOVERY_INBOUND_PROTOCOL_DETECTION_TIMEOUT"),
  });
  const protocolFilters = Object.freeze({
    redis: env.bool("DISCOVERY_ENABLE_REDIS_FILTER"),
    mysql: env.bool("DISCOVERY_ENABLE_MYSQL_FILTER"),
    thrift: env.bool("DISCOVERY_ENABLE_THRIFT_FILTER"),
  });
  const initialFetchTimeoutNs = env.isSet("DISCOVERY_INITIAL_FETCH_TIMEOUT")
    ? env.duration("DISCOVERY_INITIAL_FETCH_TIMEOUT")
    : undefined;
  const filterGatewayClusters = env.bool("DISCOVERY_FILTER_GATEWAY_CLUSTER_CONFIG");
  const traceSampling = env.float("DISCOVERY_TRACE_SAMPLING");
  const inboundTlsV2 = env.bool("DISCOVERY_SIDECAR_ENABLE_INBOUND_TLS_V2");
  const tcpMetadataExchange = env.bool("DISCOVERY_ENABLE_TCP_METADATA_EXCHANGE");
  const headlessPodListeners = env.bool("DISCOVERY_ENABLE_HEADLESS_SERVICE_POD_LISTENERS");
  const allowMetadataCerts = env.bool("DISCOVERY_ALLOW_METADATA_CERTS_DR_MUTUAL_TLS");
  const endpointTelemetryLabel = env.bool("DISCOVERY_ENDPOINT_TELEMETRY_LABEL");
  const defaultRequestTimeoutNs = env.duration("MESH_DEFAULT_REQUEST_TIMEOUT");
  let builds = 0;
  // Asks through the debouncer (declared below), so the push merges with the listing's own events.
  const gate = new SyncGate({
    unsynced: options.unsynced ?? (() => undefined),
    requestFull: () => debouncer.enqueue(pushRequest(true, "global", undefined, performance.now())),
  });
  // The newest snapshot's memo, whose carried tables the next snapshot starts from.
  let derived: DerivedMemo | undefined;
  const stage = new SnapshotStage({
    build: () =>
      buildPushContext({
        derived: derived = derived?.successor() ?? new DerivedMemo(),
        store,
        services: registry,
        mesh: options.mesh(),
        domain: options.domain,
        scopeGatewayToNamespace,
        enableVirtualServiceDelegate,
        protocolSniffing,
        outboundHttp,
        protocolFilters,
        ...(initialFetchTimeoutNs === undefined ? {} : { initialFetchTimeoutNs }),
        filterGatewayClusters,
        traceSampling,
        inboundTlsV2,
        tcpMetadataExchange,
        endpointTelemetryLabel,
        headlessPodListeners,
        allowMetadataCerts,
        defaultRequestTimeoutNs,
        ...(options.plugins ? { plugins: options.plugins } : {}),
        endpoints,
        networks: new MeshNetworkIndex(
          options.networks?.() ?? { networks: {} },
          registry.registries(),
          registry.clusterId,
        ),
        ...(options.secrets ? { secrets: options.secrets } : {}),
        version: `${new Date().toISOString()}/${++builds}`,
      }),
    endpoints: () => endpoints.snapshot(),
    gate,
    log: options.log,
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });
  const debouncer = new PushDebouncer(stage.handle, {
    afterMs: env.durationMs("DISCOVERY_DEBOUNCE_AFTER"),
    maxMs: env.durationMs("DISCOVERY_DEBOUNCE_MAX"),
    enableEdsDebounce: env.bool("DISCOVERY_ENABLE_EDS_DEBOUNCE"),
  }, {
    ...(options.metrics ? { metrics: options.metrics } : {}),
    log: options.log,
    held: () => store.writing === true,
  });
  const changes = connectChangeEvents({
    store,
    registry,
    endpoints,
    enqueue: (request) => debouncer.enqueue(request),
    headlessPodListeners,
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });
  gate.start();
  return {
    endpoints,
    debouncer,
    stage,
    changes,
    gate,
    close() {
      gate.close();
      changes.close();
      debouncer.close();
    },
  };
}
