import assert from "node:assert/strict";
import type { TrafficPolicy } from "@mesh/shared/config/networking/traffic_policy";
import { mergeTrafficPolicy } from "./traffic_policy_merge.ts";

const top: TrafficPolicy = {
  loadBalancer: { simple: "LEAST_CONN" },
  connectionPool: { tcp: { maxConnections: 5 } },
  portLevelSettings: [{ port: { number: 8080 }, outlierDetection: { consecutive5xxErrors: 7 } }],
};

Deno.test("mergeTrafficPolicy merges a DestinationRule's policies as Istio does", async (t) => {
  await t.step("no policies merge to none", () => {
    assert.equal(mergeTrafficPolicy(undefined, undefined, 80), undefined);
  });

  await t.step("the top level applies to ports without port-level settings", () => {
    assert.deepEqual(mergeTrafficPolicy(top, undefined, 80), {
      loadBalancer: { simple: "LEAST_CONN" },
      connectionPool: { tcp: { maxConnections: 5 } },
    });
  });

  await t.step("port-level settings replace every part for their port", () => {
    assert.deepEqual(mergeTrafficPolicy(top, undefined, 8080), {
      outlierDetection: { consecutive5xxErrors: 7 },
    });
  });

  await t.step("subset parts override top-level parts one by one", () => {
    assert.deepEqual(mergeTrafficPolicy(top, { loadBalancer: { simple: "RANDOM" } }, 80), {
      loadBalancer: { simple: "RANDOM" },
      connectionPool: { tcp: { maxConnections: 5 } },
    });
  });

  await t.step("a subset's port-level settings replace everything for their port", () => {
    const subset: TrafficPolicy = {
      portLevelSettings: [{ port: { number: 80 }, loadBalancer: { simple: "RANDOM" } }],
    };
    assert.deepEqual(mergeTrafficPolicy(top, subset, 80), { loadBalancer: { simple: "RANDOM" } });
    assert.deepEqual(mergeTrafficPolicy(top, subset, 81), mergeTrafficPolicy(top, undefined, 81));
  });
});
