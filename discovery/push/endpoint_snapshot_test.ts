import assert from "node:assert/strict";
import { EndpointIndex } from "./endpoint_index.ts";
import { serviceEntry, world } from "./_test_support.ts";

Deno.test("An endpoint snapshot shares the shards of every namespace that did not change with the one before", () => {
  const w = world();
  const index = new EndpointIndex(w.registry);
  w.registry.onEndpointEvent((event) => index.update(event));
  w.apply(serviceEntry("a", "one", "one.a", undefined, "10.0.0.1"));
  w.apply(serviceEntry("b", "two", "two.b", undefined, "10.0.0.2"));
  index.prime([{ hostname: "one.a", namespace: "a" }, { hostname: "two.b", namespace: "b" }]);
  const first = index.snapshot();
  assert.equal(index.snapshot(), first, "nothing changed: the same snapshot");
  w.apply(serviceEntry("b", "two", "two.b", undefined, "10.0.0.3"));
  const second = index.snapshot();
  assert.notEqual(second, first);
  assert.equal(second.namespace("a"), first.namespace("a"), "namespace a is shared as it was");
  assert.notEqual(second.namespace("b"), first.namespace("b"));
  assert.equal(second.shards("two.b", "b").version, first.shards("two.b", "b").version + 1);
  assert.deepEqual(
    first.instancesAt(["10.0.0.2"]).map((i) => i.service.hostname),
    ["two.b"],
    "the first is as it was",
  );
  assert.deepEqual(second.instancesAt(["10.0.0.3"]).map((i) => i.service.hostname), ["two.b"]);
  assert.equal(second.generation, first.generation + 1);
});
