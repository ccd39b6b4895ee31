/**
 * The orchestrator registry under churn: updates that change nothing the model reads cost nothing, and those
 * that do rebuild only the services they touch. Rebuilds are counted through the WorkloadEntry source, which
 * every rebuild of a selecting Service's endpoints consults for the Service's namespace; each service here has
 * a namespace of its own, so the namespaces asked name the services rebuilt. "Nothing happened" is checked
 * once the registry has counted the watch event (`discovery_orch_reg_events`), which it does right before
 * handling it.
 */
import assert from "node:assert/strict";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { type ApiObject, OrchApiServer } from "@mesh/shared/testing/orch_api_server";
import { waitFor } from "../config/_test_support.ts";
import type { EndpointEvent } from "../registry/service_registry.ts";
import type { WorkloadSource } from "../registry/workload_source.ts";
import { withRegistry } from "./_orch_registry_support.ts";
import type { OrchRegistry } from "./orch_registry.ts";

/** Each service, its namespace, and the nodes of its pods. */
const SERVICES = { alpha: ["node-a"], beta: ["node-b"], gamma: ["node-a", "node-b"] } as const;
type Name = keyof typeof SERVICES;
const host = (name: Name) => `${name}.ns-${name}.svc.cluster.local`;

function node(name: string, zone: string, extra: { labels?: object; annotations?: object } = {}): ApiObject {
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name,
      labels: { "topology.kubernetes.io/region": "r1", "topology.kubernetes.io/zone": zone, ...extra.labels },
      annotations: { ...extra.annotations },
    },
  };
}

function pod(name: Name, i: number, status: object = {}): ApiObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: `${name}-${i}`, namespace: `ns-${name}`, labels: { app: name } },
    spec: { serviceAccountName: name, nodeName: SERVICES[name][i] },
    status: { podIP: ip(name, i), phase: "Running", ...status },
  };
}

const ip = (name: Name, i: number) => `10.${Object.keys(SERVICES).indexOf(name)}.0.${i + 1}`;

function namespace(name: Name, labels: object = {}, annotations: object = {}): ApiObject {
  return { apiVersion: "v1", kind: "Namespace", metadata: { name: `ns-${name}`, labels, annotations } };
}

function applyCluster(api: OrchApiServer): void {
  api.apply(node("node-a", "z1"));
  api.apply(node("node-b", "z2"));
  for (const name of Object.keys(SERVICES) as Name[]) {
    api.apply(namespace(name));
    api.apply({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace: `ns-${name}` },
      spec: { clusterIP: "10.96.0.10", ports: [{ name: "http", port: 8080 }], selector: { app: name } },
    });
    SERVICES[name].forEach((_, i) => api.apply(pod(name, i)));
    api.apply({
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: { name, namespace: `ns-${name}` },
      subsets: [{
        addresses: SERVICES[name].map((nodeName, i) => ({
          ip: ip(name, i),
          nodeName,
          targetRef: { kind: "Pod", name: `${name}-${i}`, namespace: `ns-${name}` },
        })),
        ports: [{ name: "http", port: 9080 }],
      }],
    });
  }
}

/** What the registry did after the cluster was loaded. */
interface Observed {
  /** Namespaces whose services' endpoints were rebuilt, one entry per rebuild. */
  readonly rebuilt: string[];
  /** Hostnames of the endpoint events. */
  readonly endpointEvents: string[];
  /** Namespaces announced to the selectors of pods. */
  readonly podNews: string[];
  /** How many watch events of `type` (`Nodes`, `Pods`, `Namespaces`) with `event` the registry has seen. */
  seen(type: string, event: string): Promise<number>;
  /** Called with the namespace of each rebuild. */
  onRebuild?: (namespace: string) => void;
}

/** Loads the cluster, waits for the first sync, and observes what the registry does from then on. */
async function observing(
  fn: (api: OrchApiServer, r: OrchRegistry, observed: Observed) => Promise<void>,
  extra: { resyncMs?: number; resyncSliceMs?: number } = {},
): Promise<void> {
  const api = OrchApiServer.start();
  const metrics = new Metrics("discovery", { version: "t", tag: "t" });
  let counting = false;
  const rebuilt: string[] = [];
  let observed: Observed | undefined;
  const entries: WorkloadSource = {
    workloads: (ns) => {
      if (counting) rebuilt.push(ns);
      observed?.onRebuild?.(ns);
      return [];
    },
    onChange: () => () => {},
  };
  try {
    applyCluster(api);
    await withRegistry(api, async (r) => {
      r.selectWorkloadEntries(entries);
      await waitFor(() => r.registry.hasSynced(), "the first sync");
      const endpointEvents: string[] = [];
      const podNews: string[] = [];
      r.registry.onEndpointEvent((e: EndpointEvent) => endpointEvents.push(e.hostname));
      r.pods.onChange((ns) => podNews.push(ns));
      counting = true;
      const seen = async (type: string, event: string) =>
        (await metrics.counter("discovery_orch_reg_events").get()).values
          .find((v) => v.labels.type === type && v.labels.event === event)?.value ?? 0;
      observed = { rebuilt, endpointEvents, podNews, seen };
      await fn(api, r, observed);
    }, { metrics, ...extra });
  } finally {
    await api.close();
  }
}

const localities = (r: OrchRegistry, name: Name) =>
  r.registry.instances(host(name)).map((i) => `${i.endpoint.address} ${i.endpoint.locality.label}`).sort();

/** Applies `object` and waits until the registry has handled the watch event it causes. */
async function handled(api: OrchApiServer, observed: Observed, type: string, object: ApiObject) {
  const before = await observed.seen(type, "update");
  api.apply(object);
  await waitFor(async () => await observed.seen(type, "update") > before, `the ${type} update handled`);
}

Deno.test("A Node annotation update emits no endpoint event and rebuilds no service", async () => {
  await observing(async (api, _r, observed) => {
    await handled(
      api,
      observed,
      "Nodes",
      node("node-a", "z1", {
        annotations: { "node.alpha.kubernetes.io/ttl": "0" },
        labels: { "kubernetes.io/hostname": "node-a" },
      }),
    );
    assert.deepEqual(observed.rebuilt, [], "no service's endpoints rebuilt");
    assert.deepEqual(observed.endpointEvents, []);
    assert.deepEqual(observed.podNews, [], "nothing new for the selectors of the pods on it");
  });
});

Deno.test("A Node zone change updates only the endpoints of pods on that node", async () => {
  await observing(async (api, r, observed) => {
    await handled(api, observed, "Nodes", node("node-b", "z9"));
    assert.deepEqual(localities(r, "beta"), ["10.1.0.1 r1/z9"]);
    assert.deepEqual(localities(r, "gamma"), ["10.2.0.1 r1/z1", "10.2.0.2 r1/z9"]);
    assert.deepEqual(localities(r, "alpha"), ["10.0.0.1 r1/z1"]);
    assert.deepEqual(observed.rebuilt.sort(), ["ns-beta", "ns-gamma"], "alpha has no pod on node-b");
    assert.deepEqual(observed.endpointEvents.sort(), [host("beta"), host("gamma")]);
  });
});

Deno.test("A Node zone change is news to the selectors of the pods on it, and only of those", async () => {
  await observing(async (api, r, observed) => {
    await handled(api, observed, "Nodes", node("node-b", "z9"));
    assert.deepEqual(observed.podNews.sort(), ["ns-beta", "ns-gamma"]);
    assert.equal(r.pods.workloads("ns-beta")[0].spec.locality, "r1/z9");
  });
});

Deno.test("A pod status report that changes nothing the mesh reads rebuilds nothing and is no news", async () => {
  await observing(async (api, _r, observed) => {
    await handled(
      api,
      observed,
      "Pods",
      pod("alpha", 0, { hostIP: "192.168.0.1", startTime: "2026-11-27T00:00:00Z" }),
    );
    assert.deepEqual(observed.rebuilt, [], "no service's endpoints rebuilt");
    assert.deepEqual(observed.podNews, []);
    // Readiness moves the pod as a selectable workload; its endpoints' readiness is the Endpoints object's.
    await handled(
      api,
      observed,
      "Pods",
      pod("alpha", 0, { conditions: [{ type: "Ready", status: "False" }] }),
    );
    assert.deepEqual(observed.podNews, ["ns-alpha"]);
    assert.deepEqual(observed.rebuilt, []);
    assert.deepEqual(observed.endpointEvents, []);
  });
});

Deno.test("A Namespace change rebuilds the endpoints in it only when its network label changes", async () => {
  await observing(async (api, r, observed) => {
    await handled(api, observed, "Namespaces", namespace("beta", {}, { "owner": "team-b" }));
    assert.deepEqual(observed.rebuilt, [], "an annotation changes no endpoint");
    await handled(api, observed, "Namespaces", namespace("beta", { "topology.mesh.io/network": "net-b" }));
    assert.deepEqual(observed.rebuilt, ["ns-beta"]);
    assert.deepEqual(r.registry.instances(host("beta")).map((i) => i.endpoint.network), ["net-b"]);
  });
});

Deno.test("A resync lets the event loop run between one service and the next", async () => {
  await observing(async (_api, _r, observed) => {
    // For each rebuild after the first one seen: whether a timer set at that first one has fired since.
    const turned: boolean[] = [];
    let timerFired: boolean | undefined;
    observed.onRebuild = () => {
      if (timerFired !== undefined) turned.push(timerFired);
      else {
        timerFired = false;
        setTimeout(() => timerFired = true, 0);
      }
    };
    await waitFor(() => turned.length >= 2, "two more rebuilds of a resync");
    observed.onRebuild = undefined;
    assert.deepEqual(turned.slice(0, 2), [true, true]);
  }, { resyncMs: 50, resyncSliceMs: 0 });
});
