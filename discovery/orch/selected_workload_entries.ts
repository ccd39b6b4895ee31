/**
 * The endpoints a Service gets from WorkloadEntries its selector picks
 * (`DISCOVERY_ENABLE_ORCH_SELECT_WORKLOAD_ENTRIES`), beside those of its pods.
 *
 * @module
 */
import type { Endpoint } from "../model/endpoint.ts";
import { selectorMatches } from "../model/labels.ts";
import { convertEndpoint } from "../registry/serviceentry/convert_service_entry.ts";
import type { WorkloadSource } from "../registry/workload_source.ts";
import type { OrchService } from "./orch_objects.ts";

/** Endpoints of the WorkloadEntries `svc` selects, one per service port; none without a selector. */
export function selectedWorkloadEntryEndpoints(
  svc: OrchService,
  source: WorkloadSource,
  clusterId: string,
): Endpoint[] {
  const selector = svc.spec?.selector;
  if (!selector || Object.keys(selector).length === 0) return [];
  const namespace = svc.metadata.namespace ?? "default";
  const out: Endpoint[] = [];
  for (const workload of source.workloads(namespace)) {
    if (!selectorMatches(selector, workload.spec.labels ?? {})) continue;
    for (const port of svc.spec?.ports ?? []) {
      const target = typeof port.targetPort === "number" ? port.targetPort : undefined;
      out.push(convertEndpoint(workload.spec, {
        number: port.port,
        ...(port.name ? { name: port.name } : {}),
        ...(target ? { targetPort: target } : {}),
      }, { namespace, workloadName: workload.name, clusterId }));
    }
  }
  return out;
}
