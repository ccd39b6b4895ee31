import assert from "node:assert/strict";
import { OrchApiServer } from "@mesh/shared/testing/orch_api_server";
import { waitFor } from "../config/_test_support.ts";
import { node, pod, withRegistry } from "./_orch_registry_support.ts";

Deno.test("Ready running pods are lent as selectable workloads, with news of their namespace's changes", async () => {
  const api = OrchApiServer.start();
  try {
    api.apply(node());
    api.apply(pod("ratings-1", "10.1.0.1"));
    api.apply({ ...pod("ratings-2", "10.1.0.2"), status: { podIP: "10.1.0.2", phase: "Pending" } });
    api.apply({
      ...pod("ratings-3", "10.1.0.3"),
      status: { podIP: "10.1.0.3", phase: "Running", conditions: [{ type: "Ready", status: "False" }] },
    });
    await withRegistry(api, async (r) => {
      const changed: string[] = [];
      r.pods.onChange((namespace) => changed.push(namespace));
      await waitFor(() => r.registry.hasSynced(), "the first sync");
      assert.deepEqual(r.pods.workloads("shop"), [{
        name: "ratings-1",
        namespace: "shop",
        spec: {
          address: "10.1.0.1",
          labels: { app: "ratings" },
          serviceAccount: "ratings",
          locality: "r1/z1",
        },
      }]);
      assert.deepEqual(r.pods.workloads("other"), []);
      assert.ok(changed.includes("shop"), "the first sync is news");
      changed.length = 0;
      api.apply(pod("ratings-4", "10.1.0.4"));
      await waitFor(() => changed.includes("shop"), "a new pod's namespace announced");
      assert.deepEqual(r.pods.workloads("shop").map((w) => w.name), ["ratings-1", "ratings-4"]);
    });
  } finally {
    await api.close();
  }
});
