import assert from "node:assert/strict";
import {
  changedKindsOf,
  configKey,
  eventCount,
  mergePushRequests,
  pushRequest,
  serviceKey,
  VIRTUAL_SERVICE_HTTP,
  withHttpRoutesAlone,
} from "./push_request.ts";

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

Deno.test("A request whose VirtualServices changed HTTP routes alone reports them as that part of the kind", async (t) => {
  const vs = pushRequest(true, "config", [configKey("VirtualService", "ns", "a")], 0);
  const dr = pushRequest(true, "config", [configKey("DestinationRule", "ns", "a")], 0);
  const alone = withHttpRoutesAlone(vs);

  await t.step("marked only when it names a VirtualService", () => {
    assert.equal(alone.httpRoutesAlone, true);
    assert.ok(Object.isFrozen(alone));
    assert.equal(withHttpRoutesAlone(dr), dr);
    const global = pushRequest(true, "global", undefined, 0);
    assert.equal(withHttpRoutesAlone(global), global);
  });

  await t.step("its kinds name the part; other kinds stay whole", () => {
    assert.deepEqual([...changedKindsOf(mergePushRequests(alone, dr))!].sort(), [
      "DestinationRule",
      VIRTUAL_SERVICE_HTTP,
    ]);
    assert.deepEqual([...changedKindsOf(vs)!], ["VirtualService"]);
    assert.equal(changedKindsOf(pushRequest(true, "global", undefined, 0)), undefined);
  });

  await t.step("a merge keeps the mark only when every VirtualService change it holds had it", () => {
    assert.equal(mergePushRequests(alone, dr).httpRoutesAlone, true, "the other named none");
    assert.equal(mergePushRequests(dr, alone).httpRoutesAlone, true);
    assert.equal(mergePushRequests(alone, alone).httpRoutesAlone, true);
    assert.equal(
      mergePushRequests(alone, vs).httpRoutesAlone,
      undefined,
      "an unmarked VirtualService change",
    );
    assert.equal(mergePushRequests(vs, alone).httpRoutesAlone, undefined);
    assert.equal(mergePushRequests(vs, dr).httpRoutesAlone, undefined);
    assert.equal(
      mergePushRequests(alone, pushRequest(true, "global", undefined, 0)).httpRoutesAlone,
      undefined,
    );
  });
});
