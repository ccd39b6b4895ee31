/**
 * Which changes of orchestrator objects change the model. Watches deliver every update (a kubelet's status
 * report, a controller's annotation), and most change nothing the conversion in `orch_convert.ts` reads: these
 * compare only the fields it reads, so such updates cost a comparison and nothing more.
 *
 * @module
 */
import { isDeepStrictEqual } from "node:util";
import { networkOf, nodeLocality, podWorkloadSpec } from "./orch_convert.ts";
import type { OrchNamespace, OrchNode, OrchPod } from "./orch_objects.ts";

/** True when the two label sets hold the same keys and values. */
function sameLabels(
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>> | undefined,
): boolean {
  if (a === b) return true;
  const aKeys = Object.keys(a ?? {});
  if (aKeys.length !== Object.keys(b ?? {}).length) return false;
  return aKeys.every((key) => b?.[key] === a?.[key]);
}

/** True when a Node's change moves the endpoints on it: its locality (region, zone, subzone labels). */
export function nodeChangesModel(before: OrchNode | undefined, after: OrchNode | undefined): boolean {
  return nodeLocality(before) !== nodeLocality(after);
}

/** True when a Namespace's change moves its endpoints: the network its labels name. */
export function namespaceChangesModel(
  before: OrchNamespace | undefined,
  after: OrchNamespace | undefined,
): boolean {
  return networkOf({}, before) !== networkOf({}, after);
}

/**
 * True when a pod's change changes the endpoints that name it: whether it is known, its labels, service
 * account or node (readiness comes from the Endpoints object, not the pod).
 */
export function podChangesEndpoints(before: OrchPod | undefined, after: OrchPod | undefined): boolean {
  if (before === undefined || after === undefined) return before !== after;
  return before.spec?.serviceAccountName !== after.spec?.serviceAccountName ||
    before.spec?.nodeName !== after.spec?.nodeName ||
    !sameLabels(before.metadata.labels, after.metadata.labels);
}

/** True when a pod's change changes it as a selectable workload (address, readiness, labels, locality). */
export function podChangesWorkload(
  before: OrchPod | undefined,
  after: OrchPod | undefined,
  nodes: (name: string) => OrchNode | undefined,
): boolean {
  const spec = (pod: OrchPod | undefined) => pod === undefined ? undefined : podWorkloadSpec(pod, nodes);
  return !isDeepStrictEqual(spec(before), spec(after));
}
