/**
 * The status of the orchestrator Ingresses the mesh serves, as the reference's ingress status syncer writes
 * it: `status.loadBalancer.ingress` of every such Ingress names the addresses of the ingress gateway's Service
 * (`ingressService` in the ingress namespace: its load-balancer ingress, else its external IPs), so clients
 * and tools such as `kubectl get ingress` see where the Ingress is served. Only the leader of the reference's
 * `mesh-leader` duty writes; each Ingress is written when its addresses differ from what this replica last
 * wrote, through the one status writer and its QPS budget.
 *
 * @module
 */
import { isIP } from "node:net";
import type { DutyGate } from "@mesh/shared/lifecycle/duty_gate";

/** One Ingress the mesh serves. */
export interface IngressRef {
  readonly namespace: string;
  readonly name: string;
}

/** What the syncer needs. */
export interface IngressStatusOptions {
  /** Writes one status field of one object through the status subresource. */
  readonly writer: {
    writeField(
      ref: { group: string; version: string; plural: string; namespace: string; name: string },
      field: string,
      value: unknown,
      signal?: AbortSignal,
    ): void;
  };
  /** `DUTIES.ingressController`. */
  readonly gate: DutyGate;
  /** The Ingresses of the mesh's class, now. */
  readonly ingresses: () => readonly IngressRef[];
  /** The ingress gateway Service's external addresses (IPs or host names), now; empty when unknown. */
  readonly addresses: () => readonly string[];
}

/** `status.loadBalancer` naming `addresses`, IPs as `ip` and names as `hostname`, sorted. */
export function loadBalancerStatus(addresses: readonly string[]): { ingress: Record<string, string>[] } {
  return {
    ingress: [...new Set(addresses)].sort().map((a): Record<string, string> =>
      isIP(a) !== 0 ? { ip: a } : { hostname: a }
    ),
  };
}

/** Keeps the Ingresses' `status.loadBalancer` on the gateway's addresses while this replica leads. */
export class IngressStatusSyncer {
  readonly #options: IngressStatusOptions;
  /** `namespace/name` → the status last written there by this replica, as JSON. */
  #written = new Map<string, string>();
  #signal: AbortSignal | undefined;

  constructor(options: IngressStatusOptions) {
    this.#options = options;
  }

  /** Starts following the duty: on winning it every Ingress is written; returns what stops it. */
  start(): () => void {
    return this.#options.gate.whileLeading((signal) => {
      this.#signal = signal;
      this.#written = new Map();
      this.sync();
    });
  }

  /** Writes every Ingress whose status would change: call when Ingresses or the gateway's Service change. */
  sync(): void {
    const signal = this.#signal;
    if (signal === undefined || signal.aborted) return;
    const status = loadBalancerStatus(this.#options.addresses());
    const json = JSON.stringify(status);
    const next = new Map<string, string>();
    for (const { namespace, name } of this.#options.ingresses()) {
      const key = `${namespace}/${name}`;
      next.set(key, json);
      if (this.#written.get(key) === json) continue;
      this.#options.writer.writeField(
        { group: "networking.k8s.io", version: "v1", plural: "ingresses", namespace, name },
        "loadBalancer",
        status,
        signal,
      );
    }
    this.#written = next;
  }
}
