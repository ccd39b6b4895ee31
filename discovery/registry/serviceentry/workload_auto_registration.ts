import type { Logger } from "../../../shared/log/logger.ts";
import type { Resource } from "../../../shared/config/resource.ts";
import { NETWORKING_GROUP } from "../../../shared/config/kinds.ts";
import type { WorkloadEntrySpec } from "../../../shared/config/networking/workload_entry.ts";
import type { WorkloadGroupSpec } from "../../../shared/config/networking/workload_group.ts";
import type { WritableConfigStore } from "../../model/config_store.ts";
import type { Proxy } from "../../model/proxy.ts";

/** Annotation naming the WorkloadGroup an auto-registered WorkloadEntry came from. */
export const AUTO_REGISTRATION_GROUP_ANNOTATION = "mesh.io/autoRegistrationGroup";
/** Annotation naming the discovery instance the workload is connected to. */
export const WORKLOAD_CONTROLLER_ANNOTATION = "mesh.io/workloadController";
/** Annotation with the time the workload last connected. */
export const CONNECTED_AT_ANNOTATION = "mesh.io/connectedAt";
/** Annotation with the time the workload disconnected; the entry is removed after the grace period. */
export const DISCONNECTED_AT_ANNOTATION = "mesh.io/disconnectedAt";

/** The name of the WorkloadEntry for a proxy of a group: `group-ip[-network]`, `:` of IPv6 made `-`. */
export function autoRegisteredEntryName(proxy: Proxy): string | undefined {
  const group = proxy.metadata.autoRegisterGroup;
  if (!group) return undefined;
  const parts = [group, proxy.ipAddresses[0].replaceAll(":", "-")];
  if (proxy.metadata.network) parts.push(proxy.metadata.network);
  return parts.join("-");
}

/**
 * The WorkloadEntry a proxy of a WorkloadGroup stands for: the group's template with the proxy's first
 * address, labels merged (proxy labels > group metadata labels > template labels), the proxy's network and
 * locality when it reports them.
 */
export function workloadEntryFromGroup(
  group: Resource<WorkloadGroupSpec>,
  proxy: Proxy,
  annotations: Readonly<Record<string, string>> = {},
): Resource<WorkloadEntrySpec> {
  const template = group.spec.template ?? {};
  const labels = { ...template.labels, ...group.spec.metadata?.labels, ...proxy.metadata.labels };
  const locality = proxy.locality
    ? [proxy.locality.region, proxy.locality.zone, proxy.locality.subZone].filter((p) => p).join("/")
    : "";
  const spec: WorkloadEntrySpec = {
    ...template,
    address: proxy.ipAddresses[0],
    labels,
    ...(proxy.metadata.network ? { network: proxy.metadata.network } : {}),
    ...(locality ? { locality } : {}),
  };
  return {
    gvk: { group: NETWORKING_GROUP, version: "v1alpha3", kind: "WorkloadEntry" },
    meta: {
      name: autoRegisteredEntryName(proxy) ?? `${group.meta.name}-${proxy.ipAddresses[0]}`,
      namespace: proxy.namespace,
      labels,
      annotations: {
        ...group.spec.metadata?.annotations,
        [AUTO_REGISTRATION_GROUP_ANNOTATION]: group.meta.name,
        ...annotations,
      },
    },
    spec,
  };
}

/** Options of WorkloadAutoRegistration. */
export interface WorkloadAutoRegistrationOptions {
  /** `DISCOVERY_ENABLE_WORKLOAD_ENTRY_AUTOREGISTRATION`. */
  readonly enabled: boolean;
  /** `DISCOVERY_WORKLOAD_ENTRY_GRACE_PERIOD`, milliseconds. */
  readonly gracePeriodMs: number;
  /** Identifies this discovery instance in the controller annotation. */
  readonly instanceId: string;
  /** Where registrations and cleanups are logged. */
  readonly log: Logger;
  /** The clock for the connect and disconnect annotations; tests pass a fixed one. */
  readonly now?: () => Date;
}

/**
 * Keeps a WorkloadEntry for each connected proxy that names a WorkloadGroup (`AUTO_REGISTER_GROUP`): written
 * on connect, removed when the proxy stays disconnected for the grace period. The xDS server calls
 * `onConnect`/`onDisconnect`.
 */
export class WorkloadAutoRegistration {
  readonly #store: WritableConfigStore;
  readonly #options: WorkloadAutoRegistrationOptions;
  readonly #cleanups = new Map<string, ReturnType<typeof setTimeout>>();
  readonly #now: () => Date;

  /** Writes WorkloadEntries to `store`; nothing happens until proxies connect. */
  constructor(store: WritableConfigStore, options: WorkloadAutoRegistrationOptions) {
    this.#store = store;
    this.#options = options;
    this.#now = options.now ?? (() => new Date());
  }

  /** Registers the proxy's workload; returns the entry written, or undefined when nothing applies. */
  onConnect(proxy: Proxy): Resource<WorkloadEntrySpec> | undefined {
    const groupName = proxy.metadata.autoRegisterGroup;
    if (!this.#options.enabled || !groupName) return undefined;
    const group = this.#store.get("WorkloadGroup", proxy.namespace, groupName) as
      | Resource<WorkloadGroupSpec>
      | undefined;
    if (!group) {
      this.#options.log.warn("Cannot auto-register workload: WorkloadGroup not found", {
        proxy: proxy.id,
        group: `${proxy.namespace}/${groupName}`,
      });
      return undefined;
    }
    const entry = workloadEntryFromGroup(group, proxy, {
      [WORKLOAD_CONTROLLER_ANNOTATION]: this.#options.instanceId,
      [CONNECTED_AT_ANNOTATION]: this.#now().toISOString(),
    });
    this.#cancelCleanup(`${entry.meta.namespace}/${entry.meta.name}`);
    this.#store.apply(entry);
    this.#options.log.info("auto-registered workload", { proxy: proxy.id, entry: entry.meta.name });
    return entry;
  }

  /** Marks the proxy's entry disconnected and removes it after the grace period unless it reconnects. */
  onDisconnect(proxy: Proxy): void {
    const name = autoRegisteredEntryName(proxy);
    if (!this.#options.enabled || !name) return;
    const key = `${proxy.namespace}/${name}`;
    const current = this.#store.get("WorkloadEntry", proxy.namespace, name);
    if (!current || current.meta.annotations?.[AUTO_REGISTRATION_GROUP_ANNOTATION] === undefined) return;
    const annotations: Record<string, string> = { ...current.meta.annotations };
    delete annotations[WORKLOAD_CONTROLLER_ANNOTATION];
    annotations[DISCONNECTED_AT_ANNOTATION] = this.#now().toISOString();
    this.#store.apply({ ...current, meta: { ...current.meta, annotations } });
    this.#cancelCleanup(key);
    this.#cleanups.set(
      key,
      setTimeout(() => {
        this.#cleanups.delete(key);
        this.#store.delete("WorkloadEntry", proxy.namespace, name);
        this.#options.log.info("removed auto-registered workload after grace period", { entry: key });
      }, this.#options.gracePeriodMs),
    );
  }

  /** Cancels pending removals (entries stay). */
  close(): void {
    for (const timer of this.#cleanups.values()) clearTimeout(timer);
    this.#cleanups.clear();
  }

  #cancelCleanup(key: string): void {
    const timer = this.#cleanups.get(key);
    if (timer !== undefined) clearTimeout(timer);
    this.#cleanups.delete(key);
  }
}
