/**
 * Connected proxies as the debug overview shows them: who each is, which types it holds and whether each is in
 * sync with the latest push, and its last rejection. Plain data, computed from what `/debug/syncz` reads.
 *
 * @module
 */
import { shortTypeName } from "@mesh/proto/type_urls";
import type { PushSnapshot } from "../generate/generator.ts";
import type { AdsServer } from "./ads_server.ts";
import type { NackInfo, TypeSync } from "./ack_tracker.ts";

/**
 * Where one type stands: `synced` (the proxy ACKed what stands for the latest push), `behind` (it ACKed an
 * older push), `pending` (a response awaits its ACK), `rejected` (it NACKed the latest response).
 */
export type TypeSyncState = "synced" | "behind" | "pending" | "rejected";

/** One watched type of one proxy. */
export interface TypeOverview {
  /** Short type name, e.g. `Cluster`. */
  readonly type: string;
  readonly state: TypeSyncState;
  /** Version of the latest response sent, when one was. */
  readonly versionSent?: string;
}

/** One connected proxy (one ADS stream). */
export interface ProxyOverview {
  readonly connectionId: string;
  readonly proxyId: string;
  /** `sidecar` or `router`. */
  readonly proxyType: string;
  /** The agent's version (`MESH_VERSION`), when it sent one. */
  readonly version?: string;
  /** The workload's cluster (`CLUSTER_ID`), when it sent one. */
  readonly cluster?: string;
  /** `sotw` or `delta`. */
  readonly protocol: string;
  readonly connectedAt: string;
  readonly types: readonly TypeOverview[];
  /** The newest rejection of any type, with the type it was of. */
  readonly lastNack?: NackInfo & { readonly type: string };
}

/** Every connected proxy, oldest connection first, judged against the latest push snapshot. */
export function proxyOverview<P extends PushSnapshot>(service: AdsServer<P>): ProxyOverview[] {
  const latest = service.pushContext?.version;
  return service.connections().map((c) => {
    const sync = Object.entries(c.syncStatus());
    let lastNack: (NackInfo & { type: string }) | undefined;
    for (const [typeUrl, s] of sync) {
      if (s.lastNack !== undefined && (lastNack === undefined || s.lastNack.at > lastNack.at)) {
        lastNack = { ...s.lastNack, type: shortTypeName(typeUrl) };
      }
    }
    const metadata = c.proxy.metadata;
    return {
      connectionId: c.id,
      proxyId: c.proxy.id,
      proxyType: c.proxy.type,
      ...(metadata.meshVersion === undefined ? {} : { version: metadata.meshVersion }),
      ...(metadata.clusterId === undefined ? {} : { cluster: metadata.clusterId }),
      protocol: c.protocol,
      connectedAt: c.connectedAt.toISOString(),
      types: sync.map(([typeUrl, s]) => ({
        type: shortTypeName(typeUrl),
        state: typeState(s, latest),
        ...(s.versionSent === undefined ? {} : { versionSent: s.versionSent }),
      })),
      ...(lastNack === undefined ? {} : { lastNack }),
    };
  });
}

/** Where a type stands against push version `latest`. */
export function typeState(sync: Readonly<TypeSync>, latest: string | undefined): TypeSyncState {
  if (sync.nonceSent === undefined) return "pending";
  if (sync.lastNack !== undefined && sync.lastNack.nonce === sync.nonceSent) return "rejected";
  if (sync.nonceAcked !== sync.nonceSent) return "pending";
  const standsFor = sync.unchangedThrough ?? sync.versionSent;
  return latest === undefined || standsFor === undefined || standsFor === latest ? "synced" : "behind";
}
