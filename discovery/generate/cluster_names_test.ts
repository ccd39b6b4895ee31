import assert from "node:assert/strict";
import { outboundClusterName } from "../push/service_index.ts";
import { parseClusterName } from "./cluster_names.ts";

Deno.test("parseClusterName reads Istio's direction|port|subset|host names", async (t) => {
  await t.step("names built by outboundClusterName parse back to their parts", () => {
    assert.deepEqual(parseClusterName(outboundClusterName("a.ns.svc.cluster.local", 7070, "v1")), {
      direction: "outbound",
      port: 7070,
      subset: "v1",
      hostname: "a.ns.svc.cluster.local",
    });
    assert.deepEqual(parseClusterName(outboundClusterName("*.example.com", 443)), {
      direction: "outbound",
      port: 443,
      subset: "",
      hostname: "*.example.com",
    });
    assert.equal(parseClusterName("inbound|80||a")?.direction, "inbound");
  });

  await t.step("anything else is not a cluster name", () => {
    for (
      const name of [
        "",
        "outbound|80|a",
        "outbound|80||",
        "sideways|80||a",
        "outbound|0||a",
        "outbound|65536||a",
        "outbound|08||a",
        "outbound|x||a",
        "outbound|80||a|b",
      ]
    ) {
      assert.equal(parseClusterName(name), undefined, name);
    }
  });

  await t.step("a name asked for again reads the same, and its parts cannot be changed by a caller", () => {
    const name = "outbound|9080|v2|reviews.shop.svc.cluster.local";
    const first = parseClusterName(name)!;
    assert.deepEqual(parseClusterName(name), first);
    assert.ok(Object.isFrozen(first));
    assert.equal(parseClusterName("outbound|x||a"), undefined);
    assert.equal(parseClusterName("outbound|x||a"), undefined, "a refused name stays refused");
  });
});
