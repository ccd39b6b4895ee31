import type { EnvSettings } from "@mesh/shared/env/env_settings";
import { MAX_DURATION_NS } from "@mesh/shared/flags/duration";
import { MAX_CONNECTION_AGE_GRACE_MS } from "@mesh/shared/grpc/grpc_channel_options";
import { closingComponent, type Component } from "@mesh/shared/lifecycle";
import type { DutyGate } from "@mesh/shared/lifecycle/duty_gate";
import type { Logger } from "@mesh/shared/log/logger";
import type { ConfigStore, WritableConfigStore } from "./model/config_store.ts";
import type { ReplicaLivenessView } from "./model/replica_liveness_view.ts";
import { storeWorkloadEntryWriter, type WorkloadEntryWriter } from "./model/workload_entry_writer.ts";
import type { PushContext } from "./push/push_context.ts";
import { WorkloadAutoRegistration } from "./registry/serviceentry/workload_auto_registration.ts";
import type { AdsServer } from "./xds/mod.ts";

/** What auto-registration is wired to. */
export interface AutoRegistrationWiring {
  readonly env: EnvSettings;
  /** The config store: WorkloadGroups are read there, and (without an orchestrator) entries written there. */
  readonly store: ConfigStore & WritableConfigStore;
  /** The orchestrator's writer, when it is read. */
  readonly writer?: WorkloadEntryWriter;
  /** The gate of the clean-up duty. */
  readonly cleanup: DutyGate;
  /** This replica's identity (the election's). */
  readonly instanceId: string;
  /** Other replicas' liveness, when elected on the orchestrator: a dead replica's entries go after the grace. */
  readonly liveness?: ReplicaLivenessView;
  /** `--keepaliveMaxServerConnectionAge` in nanoseconds (the int64 maximum: forever). */
  readonly maxConnectionAgeNs: bigint;
  /** The xDS server whose connections register workloads, once built. */
  readonly discovery: () => AdsServer<PushContext>;
  readonly log: Logger;
}

/**
 * WorkloadEntry auto-registration as a component listed after the xDS server: every connection of a proxy
 * naming a WorkloadGroup registers its workload, and the clean-up runs while this replica leads its duty.
 */
export function autoRegistrationComponent(w: AutoRegistrationWiring): Component {
  return closingComponent("auto-registration", () => {
    if (!w.env.bool("DISCOVERY_ENABLE_WORKLOAD_ENTRY_AUTOREGISTRATION")) return [];
    const registration = new WorkloadAutoRegistration({
      enabled: true,
      gracePeriodMs: w.env.durationMs("DISCOVERY_WORKLOAD_ENTRY_GRACE_PERIOD"),
      maxConnectionAgeMs: w.maxConnectionAgeNs >= MAX_DURATION_NS
        ? Infinity
        : Number(w.maxConnectionAgeNs / 1_000_000n),
      connectionGraceMs: MAX_CONNECTION_AGE_GRACE_MS,
      instanceId: w.instanceId,
      store: w.store,
      writer: w.writer ?? storeWorkloadEntryWriter(w.store),
      cleanup: w.cleanup,
      validateIdentity: w.env.bool("DISCOVERY_WORKLOAD_ENTRY_VALIDATE_IDENTITY"),
      ...(w.liveness ? { liveness: w.liveness } : {}),
      log: w.log,
    });
    registration.start();
    const discovery = w.discovery();
    return [
      () => registration.stop(),
      discovery.onConnect((c) => void registration.onConnect(c.proxy, c.connectedAt)),
      discovery.onDisconnect((c) => void registration.onDisconnect(c.proxy, c.connectedAt)),
    ];
  });
}
