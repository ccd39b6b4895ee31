import assert from "node:assert/strict";
import { eventCount, mergePushRequests, pushRequest, serviceKey } from "./push_request.ts";

Deno.test("mergePushRequests merges as Istio does", async (t) => {
  const config = pushRequest(true, "config", ["VirtualService/ns/a"], 200);
  const eds = pushRequest(false, "endpoint", [serviceKey("ns", "b.ns.svc.cluster.local")], 100);

  await t.step("full wins, the oldest start is kept, configs are united, reasons added", () => {
    const merged = mergePushRequests(mergePushRequests(config, eds), pushRequest(false, "endpoint", [], 300));
    assert.equal(merged.full, true);
    assert.equal(merged.start, 100);
    assert.deepEqual([...merged.configsUpdated!].sort(), [
      "ServiceEntry/ns/b.ns.svc.cluster.local",
      "VirtualService/ns/a",
    ]);
    assert.deepEqual(merged.reasons, { config: 1, endpoint: 2 });
    assert.equal(eventCount(merged), 3);
  });

  await t.step("two endpoint-only requests stay endpoint-only", () => {
    assert.equal(mergePushRequests(eds, eds).full, false);
  });

  await t.step("a request meaning 'anything changed' makes the merge mean it too", () => {
    const global = pushRequest(true, "global", undefined, 50);
    assert.equal(mergePushRequests(config, global).configsUpdated, undefined);
    assert.equal(mergePushRequests(global, config).configsUpdated, undefined);
  });

  await t.step("merging into nothing returns the request itself", () => {
    assert.equal(mergePushRequests(undefined, eds), eds);
    assert.ok(Object.isFrozen(eds) && Object.isFrozen(eds.configsUpdated));
  });
});
