/**
 * The `Reconciled` condition the reference writes to a mesh resource's status: how many of the proxies have
 * acknowledged a configuration containing the resource's current generation, with `observedGeneration`.
 *
 * @module
 */
import type { StatusChange } from "./status_writer.ts";

/** Proxies that acknowledged a resource's generation, out of all reported. */
export interface Progress {
  readonly acked: number;
  readonly total: number;
}

/** The condition's type, as the reference names it. */
export const RECONCILED = "Reconciled";

/** The condition's message, as the reference words it. */
export function reconciledMessage(progress: Progress): string {
  return `${progress.acked}/${progress.total} proxies up to date.`;
}

/**
 * A status change that sets the `Reconciled` condition for `progress` at `generation` and the status's
 * `observedGeneration`, keeping every other condition and field; no change when the condition already says
 * the same for the same generation. `now` stamps the probe and transition times.
 */
export function reconciledChange(progress: Progress, generation: number, now: () => Date): StatusChange {
  return (current) => {
    const conditions = Array.isArray(current.conditions)
      ? (current.conditions as Record<string, unknown>[])
      : [];
    const status = progress.acked >= progress.total ? "True" : "False";
    const message = reconciledMessage(progress);
    const found = conditions.find((c) => c?.type === RECONCILED);
    if (
      found?.status === status && found?.message === message && current.observedGeneration === generation &&
      found?.observedGeneration === generation
    ) return undefined;
    const at = now().toISOString().replace(/\.\d+Z$/, "Z");
    const condition = {
      type: RECONCILED,
      status,
      lastProbeTime: at,
      lastTransitionTime: found?.status === status ? (found.lastTransitionTime ?? at) : at,
      message,
      observedGeneration: generation,
    };
    return {
      ...current,
      conditions: found === undefined
        ? [...conditions, condition]
        : conditions.map((c) => c === found ? condition : c),
      observedGeneration: generation,
    };
  };
}
