/**
 * The names of the singleton duties replicas elect a leader for, as the reference names its locks with our
 * prefix. Every replica serves xDS, the CA and the webhooks; only the leader of a duty writes for it.
 */
export const DUTIES: Readonly<{
  namespaceController: string;
  validationController: string;
  ingressController: string;
  statusController: string;
  analyzeController: string;
}> = Object.freeze({
  /** Root-certificate ConfigMaps in every namespace. */
  namespaceController: "mesh-namespace-controller-election",
  /** The caBundle of the validation (and injection) webhook configurations. */
  validationController: "mesh-validation-controller-election",
  /** Ingress status and WorkloadEntry clean-up: the reference's legacy `istio-leader` lock. */
  ingressController: "mesh-leader",
  /** Distribution status written to mesh resources. */
  statusController: "mesh-status-leader",
  /** Analyzer messages written to mesh resources. */
  analyzeController: "mesh-analyze-leader",
});

/** Whether this replica performs one singleton duty now, and a way to run work only while it does. */
export interface DutyGate {
  /** The duty's lock name (one of `DUTIES`). */
  readonly duty: string;
  /** True while this replica leads the duty. */
  leading(): boolean;
  /**
   * Calls `run` each time the duty is won (at once when it is already led); the signal aborts the moment the
   * duty is lost or the gate stops. Returns a function that stops calling `run` and aborts a running one.
   */
  whileLeading(run: (signal: AbortSignal) => void): () => void;
}

/** A gate for a replica that runs alone (no orchestrator to elect through): it leads from the start. */
export function soleLeader(duty: string): DutyGate {
  return {
    duty,
    leading: () => true,
    whileLeading(run) {
      const controller = new AbortController();
      run(controller.signal);
      return () => controller.abort();
    },
  };
}
