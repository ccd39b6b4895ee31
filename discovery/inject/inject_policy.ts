/**
 * Whether a pod gets a sidecar, as the reference's injector decides it for the pods the webhook's
 * namespaceSelector lets through (the `mesh-injection` namespace label is the API server's side: the
 * AdmissionReview carries the namespace's name only). Host-network pods and the system namespaces are never
 * injected; a `sidecar.mesh.io/inject` label or annotation decides; otherwise `neverInjectSelector`, then
 * `alwaysInjectSelector`, then the policy.
 * @module
 */

import {
  type LabelSelector,
  labelSelectorMatches,
  selectorIsEmpty,
} from "@mesh/shared/config/label_selector";

/** What the policy reads of the injector config. */
export interface InjectPolicyConfig {
  /** `enabled` or `disabled`; anything else injects no pod. */
  readonly policy: string;
  readonly neverInjectSelector: readonly LabelSelector[];
  readonly alwaysInjectSelector: readonly LabelSelector[];
}

/** Namespaces whose pods are never injected. */
export const IGNORED_NAMESPACES: readonly string[] = [
  "kube-system",
  "kube-public",
  "kube-node-lease",
  "local-path-storage",
];

/** The injection annotation and label. */
export const INJECT_KEY = "sidecar.mesh.io/inject";

/** Whether `selector` selects `labels`; an empty selector selects nothing here, as in the reference. */
export function selectorMatches(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  return !selectorIsEmpty(selector) && labelSelectorMatches(selector, labels);
}

/** The pod facts the policy reads. */
export interface PolicyPod {
  readonly namespace: string;
  readonly hostNetwork: boolean;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
}

/** Why a pod is not injected, or undefined when it is. */
export function skipReason(config: InjectPolicyConfig, pod: PolicyPod): string | undefined {
  if (pod.hostNetwork) return "host network pod";
  if (IGNORED_NAMESPACES.includes(pod.namespace)) return `namespace "${pod.namespace}" is never injected`;
  const explicit = (pod.labels[INJECT_KEY] ?? pod.annotations[INJECT_KEY] ?? "").toLowerCase();
  let decided: boolean | undefined;
  if (["y", "yes", "true", "on"].includes(explicit)) decided = true;
  else if (explicit !== "") decided = false;
  if (decided === undefined && config.neverInjectSelector.some((s) => selectorMatches(s, pod.labels))) {
    decided = false;
  }
  if (decided === undefined && config.alwaysInjectSelector.some((s) => selectorMatches(s, pod.labels))) {
    decided = true;
  }
  if (config.policy !== "enabled" && config.policy !== "disabled") {
    return `policy "${config.policy}" injects no pod`;
  }
  const inject = decided ?? config.policy === "enabled";
  if (inject) return undefined;
  return decided === false ? `${INJECT_KEY} or a neverInjectSelector says no` : "policy disabled";
}
