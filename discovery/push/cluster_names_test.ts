import assert from "node:assert/strict";
import { outboundClusterName } from "./service_index.ts";
import { serviceEntry, world } from "./_test_support.ts";
import { CLUSTER_NAME_ENTRY_OVERHEAD, ClusterNameMemo, parseClusterName } from "./cluster_names.ts";

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
    const memo = new ClusterNameMemo();
    const name = "outbound|9080|v2|reviews.shop.svc.cluster.local";
    const first = memo.parse(name)!;
    assert.equal(memo.parse(name), first);
    assert.ok(Object.isFrozen(first));
    assert.equal(memo.parse("outbound|x||a"), undefined);
    assert.equal(memo.parse("outbound|x||a"), undefined, "a refused name stays refused");
  });
});

Deno.test("ClusterNameMemo holds at most its bound in bytes, whatever names proxies send", () => {
  const memo = new ClusterNameMemo(20_000);
  for (let i = 0; i < 2_000; i++) {
    const parts = memo.parse(`outbound|80||svc-${i}.${"x".repeat(200)}`);
    assert.equal(parts?.port, 80);
    assert.ok(memo.stats().bytes <= 20_000, `held ${memo.stats().bytes} bytes after ${i + 1} names`);
  }
  const huge = `outbound|80||${"h".repeat(30_000)}`;
  assert.equal(memo.parse(huge)?.hostname.length, 30_000, "a name bigger than the bound is parsed");
  assert.ok(memo.stats().bytes <= 20_000, "but not kept");
  memo.clear();
  assert.deepEqual(memo.stats(), { entries: 0, bytes: 0, maxBytes: 20_000 });
  const one = new ClusterNameMemo(CLUSTER_NAME_ENTRY_OVERHEAD + 12);
  one.parse("inbound|1||a");
  assert.equal(one.stats().entries, 1);
  one.parse("inbound|2||a");
  assert.equal(one.stats().entries, 1, "started afresh");
  assert.throws(() => new ClusterNameMemo(0), RangeError);
});

Deno.test("Each push snapshot parses cluster names into a memo of its own, which goes with it", () => {
  const w = world();
  w.apply(serviceEntry("ns", "svc", "svc.example"));
  const first = w.push();
  assert.equal(first.clusterNames.parse("outbound|80||svc.example")?.hostname, "svc.example");
  first.clusterNames.parse("not a cluster name");
  assert.equal(first.clusterNames.stats().entries, 2);
  const second = w.push();
  assert.notEqual(second.clusterNames, first.clusterNames);
  assert.equal(second.clusterNames.stats().entries, 0, "a new snapshot starts with nothing remembered");
});
