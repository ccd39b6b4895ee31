import assert from "node:assert/strict";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { type ApiObject, OrchApiServer } from "@mesh/shared/testing/orch_api_server";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { waitFor } from "../config/_test_support.ts";
import type { OrchRegistry } from "./orch_registry.ts";
import { endpoints, HOST, node, pod, service, withRegistry } from "./_orch_registry_support.ts";

/** A copy of the `ratings` Service named `name`, edited by `edit`. */
function otherService(
  name: string,
  edit: (spec: Record<string, unknown>, meta: Record<string, unknown>) => void,
) {
  const svc = structuredClone(service()) as ApiObject & { spec: Record<string, unknown> };
  svc.metadata.name = name;
  edit(svc.spec, svc.metadata);
  return svc;
}

/** The `ratings` objects: a node, the service, two ready pods and their Endpoints. */
function ratings(api: OrchApiServer): void {
  api.apply(node());
  api.apply(service());
  api.apply(pod("ratings-1", "10.1.0.1"));
  api.apply(pod("ratings-2", "10.1.0.2"));
  api.apply(endpoints([["ratings-1", "10.1.0.1"], ["ratings-2", "10.1.0.2"]]));
}

/** The sorted addresses of the `ratings` endpoints in `r`. */
const addresses = (r: OrchRegistry) =>
  r.registry.instances(HOST).map((i) => i.endpoint.address).sort().join();

Deno.test("A Service whose ports are a map neither stops the list nor the sync; it is read without its ports", async () => {
  // The typed client's list threw "data is not iterable" on it: no Service was ever listed, the registry
  // never synced and the server never became ready.
  const api = OrchApiServer.start();
  const log = new RecordingLogger();
  try {
    ratings(api);
    api.apply(otherService("mapped", (spec) => spec.ports = { http: { name: "http", port: 80 } }));
    await withRegistry(api, async (r) => {
      await waitFor(() => r.registry.hasSynced(), "the first sync");
      assert.equal(addresses(r), "10.1.0.1,10.1.0.2");
      assert.deepEqual(r.registry.getService("mapped.shop.svc.cluster.local")?.ports, []);
      const warned = log.matching("warn", "without the fields of the wrong shape");
      assert.equal(warned.length, 1);
      assert.equal(warned[0].fields?.object, "shop/mapped");
      assert.match(String(warned[0].fields?.problems), /^spec\.ports: expected a list, got an object/);
    }, { log });
  } finally {
    await api.close();
  }
});

Deno.test("An exportTo annotation that is a list is ignored: the service keeps the default visibility", async () => {
  const api = OrchApiServer.start();
  const log = new RecordingLogger();
  try {
    ratings(api);
    await withRegistry(api, async (r) => {
      await waitFor(() => r.registry.hasSynced(), "the first sync");
      api.apply(otherService("listed", (_spec, meta) => {
        meta.annotations = { "networking.mesh.io/exportTo": ["a", "b"] };
      }));
      await waitFor(
        () => r.registry.getService("listed.shop.svc.cluster.local") !== undefined,
        "the service",
      );
      assert.deepEqual(r.registry.getService("listed.shop.svc.cluster.local")!.exportTo, ["*"]);
      assert.match(
        String(log.matching("warn", "wrong shape")[0]?.fields?.problems),
        /metadata\.annotations\["networking\.mesh\.io\/exportTo"\]: expected a string, got a list/,
      );
    }, { log });
  } finally {
    await api.close();
  }
});

Deno.test("Null subsets and addresses, and addresses without an IP, leave out only themselves", async () => {
  const api = OrchApiServer.start();
  try {
    ratings(api);
    const eps = endpoints([["ratings-1", "10.1.0.1"]]) as ApiObject & { subsets: unknown[] };
    eps.subsets.push(null, {
      addresses: [null, { nodeName: "node-a" }],
      ports: [{ name: "http", port: 9080 }],
    });
    await withRegistry(api, async (r) => {
      await waitFor(() => addresses(r) === "10.1.0.1,10.1.0.2", "the good endpoints");
      api.apply(eps);
      await waitFor(() => addresses(r) === "10.1.0.1", "the changed endpoints");
    });
  } finally {
    await api.close();
  }
});

Deno.test("A slice endpoint without addresses is left out; the slice's other endpoints stay", async () => {
  const api = OrchApiServer.start();
  try {
    ratings(api);
    api.apply({
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name: "ratings-a", namespace: "shop", labels: { "kubernetes.io/service-name": "ratings" } },
      addressType: "IPv4",
      endpoints: [
        { conditions: { ready: true }, targetRef: { kind: "Pod", name: "ratings-2", namespace: "shop" } },
        { addresses: ["10.1.0.1"], targetRef: { kind: "Pod", name: "ratings-1", namespace: "shop" } },
      ],
      ports: [{ name: "http", port: 9080 }],
    });
    await withRegistry(api, async (r) => {
      await waitFor(() => r.registry.hasSynced(), "the first sync");
      assert.equal(addresses(r), "10.1.0.1");
    }, { useEndpointSlices: true });
  } finally {
    await api.close();
  }
});

Deno.test("A malformed Pod affects only its own endpoint and workload", async () => {
  const api = OrchApiServer.start();
  try {
    ratings(api);
    await withRegistry(api, async (r) => {
      await waitFor(() => addresses(r) === "10.1.0.1,10.1.0.2", "the good endpoints");
      const bad = pod("ratings-2", "10.1.0.2", { "security.istio.io/tlsMode": 7 as unknown as string }) as
        & ApiObject
        & { spec: Record<string, unknown>; status: Record<string, unknown> };
      bad.spec.serviceAccountName = 42;
      bad.status.conditions = { Ready: "True" };
      api.apply(bad);
      await waitFor(
        () => r.registry.instances(HOST).some((i) => i.endpoint.serviceAccount === "default"),
        "the pod's new version",
      );
      const byAddress = new Map(r.registry.instances(HOST).map((i) => [i.endpoint.address, i.endpoint]));
      assert.equal(byAddress.get("10.1.0.1")?.serviceAccount, "ratings");
      assert.equal(
        byAddress.get("10.1.0.2")?.tlsMode,
        "disabled",
        "the label that is not a string is ignored",
      );
      assert.deepEqual(r.pods.workloads("shop").map((w) => w.name), ["ratings-1", "ratings-2"]);
    });
  } finally {
    await api.close();
  }
});

Deno.test("An object that cannot be keyed is refused and counted; good versions replace bad ones, deletes remove", async () => {
  const api = OrchApiServer.start();
  const metrics = new Metrics("discovery", { version: "t", tag: "t" });
  try {
    ratings(api);
    await withRegistry(api, async (r) => {
      await waitFor(() => r.registry.hasSynced(), "the first sync");
      api.apply(otherService("renamed", (_spec, meta) => meta.generateName = "x"));
      await waitFor(() => r.registry.getService("renamed.shop.svc.cluster.local") !== undefined, "renamed");
      // A watch event whose name is not a string: the test server keys it by its own copy.
      api.apply({ ...otherService("numbered", () => {}), metadata: { name: 7 as unknown as string } });
      await waitFor(async () => {
        const counted = (await metrics.counter("discovery_total_rejected_configs").get()).values;
        return counted.some((v) => v.labels.type === "Services" && v.value === 1);
      }, "the refusal counted");
      assert.equal([...r.watched("Services")].length, 2);
      api.apply(otherService("renamed", (spec) => spec.ports = "80"));
      await waitFor(
        () => r.registry.getService("renamed.shop.svc.cluster.local")?.ports.length === 0,
        "the bad version read without its ports",
      );
      api.apply(otherService("renamed", () => {}));
      await waitFor(
        () => r.registry.getService("renamed.shop.svc.cluster.local")?.ports.length === 1,
        "the good version back",
      );
      api.delete("v1", "Service", "shop", "renamed");
      await waitFor(() => r.registry.getService("renamed.shop.svc.cluster.local") === undefined, "deleted");
    }, { metrics });
  } finally {
    await api.close();
  }
});
