import assert from "node:assert/strict";
import type { ServiceEntrySpec } from "@mesh/shared/config/networking/service_entry";
import { networking } from "../_test_support.ts";
import { entryInstances, type EntryState, setWorkload } from "./entry_state.ts";
import { convertServices, workloadInstances } from "./convert_service_entry.ts";

function selectingEntry(): EntryState {
  const resource = networking<ServiceEntrySpec>("ServiceEntry", "ns", "se", {
    hosts: ["svc.ns.example"],
    ports: [{ number: 80, name: "http", protocol: "HTTP" }],
    resolution: "STATIC",
    workloadSelector: { labels: { app: "a" } },
  });
  const services = convertServices(resource, { clusterId: "c1", defaultExportTo: ["*"] });
  return { key: "ns/se", resource, services, inline: [], workloads: new Map(), pods: [] };
}

function put(state: EntryState, name: string, address: string): void {
  const instances = workloadInstances(state.resource, state.services, { address }, {
    namespace: "ns",
    workloadName: name,
    clusterId: "c1",
  });
  setWorkload(state, name, instances);
}

const namesOf = (state: EntryState) =>
  entryInstances(state, "svc.ns.example").map((i) => i.endpoint.workloadName);

Deno.test("An entry keeps its WorkloadEntry names sorted in place as workloads come and go", () => {
  const state = selectingEntry();
  for (const name of ["we-5", "we-1", "we-9"]) put(state, name, `10.0.0.${name.slice(3)}`);
  assert.deepEqual(namesOf(state), ["we-1", "we-5", "we-9"]);
  const sorted = state.sortedNames;
  put(state, "we-3", "10.0.0.3");
  put(state, "we-7", "10.0.0.7");
  setWorkload(state, "we-5", undefined);
  put(state, "we-1", "10.0.1.1");
  // The same array, changed in place: no sort of every name per workload event.
  assert.equal(state.sortedNames, sorted);
  assert.deepEqual(state.sortedNames, ["we-1", "we-3", "we-7", "we-9"]);
  assert.deepEqual(namesOf(state), ["we-1", "we-3", "we-7", "we-9"]);
  assert.deepEqual(namesOf(state), [...state.workloads.keys()].sort((a, b) => a.localeCompare(b)));
});
