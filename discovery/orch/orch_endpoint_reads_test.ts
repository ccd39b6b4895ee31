import assert from "node:assert/strict";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { OrchApiServer } from "@mesh/shared/testing/orch_api_server";
import { waitFor } from "../config/_test_support.ts";
import { endpoints, HOST, pod, service, withRegistry } from "./_orch_registry_support.ts";

Deno.test("An endpoint whose pod is not known yet is added when the pod arrives", async () => {
  const api = OrchApiServer.start();
  try {
    api.apply(service());
    api.apply(endpoints([["ratings-1", "10.1.0.1"]]));
    await withRegistry(api, async (r) => {
      await waitFor(() => r.registry.hasSynced(), "the first sync");
      assert.equal(r.registry.instances(HOST).length, 0);
      api.apply(pod("ratings-1", "10.1.0.1"));
      await waitFor(() => r.registry.instances(HOST).length === 1, "the endpoint once its pod is known");
    });
  } finally {
    await api.close();
  }
});

Deno.test("Endpoints met before their pod are counted in discovery_orch_endpoints_with_no_pods and gauged in endpoint_no_pod until it arrives", async () => {
  const api = OrchApiServer.start();
  const metrics = new Metrics("discovery", { version: "t", tag: "t" });
  const value = async (metric: "counter" | "gauge", name: string) =>
    (await metrics[metric](name).get()).values[0]?.value ?? 0;
  try {
    api.apply(service());
    api.apply(endpoints([["ratings-1", "10.1.0.1"], ["ratings-2", "10.1.0.2"]]));
    await withRegistry(api, async (r) => {
      await waitFor(() => r.registry.hasSynced(), "the first sync");
      assert.ok(await value("counter", "discovery_orch_endpoints_with_no_pods") >= 2);
      assert.equal(await value("gauge", "endpoint_no_pod"), 2);
      api.apply(pod("ratings-1", "10.1.0.1"));
      api.apply(pod("ratings-2", "10.1.0.2"));
      await waitFor(() => r.registry.instances(HOST).length === 2, "the endpoints once their pods are known");
      assert.equal(await value("gauge", "endpoint_no_pod"), 0);
    }, { metrics });
  } finally {
    await api.close();
  }
});
