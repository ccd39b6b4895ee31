import assert from "node:assert/strict";
import {
  namespaceChangesModel,
  nodeChangesModel,
  podChangesEndpoints,
  podChangesWorkload,
} from "./orch_changes.ts";
import type { OrchNode, OrchPod } from "./orch_objects.ts";

const node = (labels: Record<string, string>, annotations: Record<string, string> = {}): OrchNode => ({
  metadata: { name: "node-a", labels, annotations },
});

const pod = (extra: { labels?: Record<string, string>; status?: OrchPod["status"] } = {}): OrchPod => ({
  metadata: { name: "ratings-1", namespace: "shop", labels: { app: "ratings", ...extra.labels } },
  spec: { serviceAccountName: "ratings", nodeName: "node-a" },
  status: { podIP: "10.1.0.1", phase: "Running", ...extra.status },
});

Deno.test("A Node change counts only when its region, zone or subzone label moves, legacy labels included", () => {
  const zone = { "topology.kubernetes.io/region": "r1", "topology.kubernetes.io/zone": "z1" };
  assert.equal(nodeChangesModel(node(zone), node(zone, { "node.alpha.kubernetes.io/ttl": "0" })), false);
  assert.equal(nodeChangesModel(node(zone), node({ ...zone, "kubernetes.io/hostname": "a" })), false);
  assert.equal(nodeChangesModel(node(zone), node({ ...zone, "topology.kubernetes.io/zone": "z2" })), true);
  assert.equal(nodeChangesModel(node(zone), node({ ...zone, "topology.mesh.io/subzone": "rack-1" })), true);
  const legacy = {
    "failure-domain.beta.kubernetes.io/region": "r1",
    "failure-domain.beta.kubernetes.io/zone": "z1",
  };
  assert.equal(nodeChangesModel(node(zone), node(legacy)), false, "the same locality, by the legacy labels");
  assert.equal(nodeChangesModel(undefined, node({})), false, "a node without locality labels adds none");
  assert.equal(nodeChangesModel(undefined, node(zone)), true);
});

Deno.test("A Namespace change counts only when the network its labels name moves", () => {
  const ns = (labels: Record<string, string>) => ({ metadata: { name: "shop", labels } });
  assert.equal(namespaceChangesModel(ns({}), ns({ team: "b" })), false);
  assert.equal(namespaceChangesModel(ns({}), ns({ "topology.istio.io/network": "net-a" })), true);
  assert.equal(
    namespaceChangesModel(
      ns({ "topology.istio.io/network": "net-a" }),
      ns({ "topology.mesh.io/network": "net-a" }),
    ),
    false,
  );
});

Deno.test("A pod's status report changes neither its endpoints nor it as a workload; readiness moves the workload", () => {
  const nodes = () => undefined;
  const reported = pod({
    status: { podIP: "10.1.0.1", phase: "Running", conditions: [{ type: "Ready", status: "True" }] },
  });
  assert.equal(podChangesEndpoints(pod(), reported), false);
  assert.equal(podChangesWorkload(pod(), reported, nodes), false);
  const unready = pod({
    status: { podIP: "10.1.0.1", phase: "Running", conditions: [{ type: "Ready", status: "False" }] },
  });
  assert.equal(
    podChangesEndpoints(pod(), unready),
    false,
    "endpoints take readiness from the Endpoints object",
  );
  assert.equal(podChangesWorkload(pod(), unready, nodes), true);
  assert.equal(podChangesEndpoints(pod(), pod({ labels: { version: "v2" } })), true);
  assert.equal(podChangesEndpoints(undefined, pod()), true, "a pod that arrives");
});
