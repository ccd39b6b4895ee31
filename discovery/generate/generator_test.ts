import assert from "node:assert/strict";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { parseProxy } from "../model/proxy.ts";
import {
  cacheKey,
  DEFAULT_GENERATOR,
  GeneratorRegistry,
  GRPC_GENERATOR,
  type XdsGenerator,
} from "./generator.ts";

const generator = (typeUrl: string): XdsGenerator => ({ typeUrl, generate: () => [] });

function proxyWith(generatorName?: string) {
  return parseProxy({
    id: "sidecar~10.0.0.1~app.ns~ns.svc.cluster.local",
    metadata: generatorName === undefined ? {} : { GENERATOR: generatorName },
  });
}

Deno.test("GeneratorRegistry picks generators by the node's GENERATOR metadata and type URL", async (t) => {
  const sidecarCds = generator(TYPE_URL.cluster);
  const grpcCds = generator(TYPE_URL.cluster);
  const sidecarLds = generator(TYPE_URL.listener);
  const registry = new GeneratorRegistry()
    .register(sidecarCds)
    .register(sidecarLds)
    .register(grpcCds, GRPC_GENERATOR);

  await t.step("a node without GENERATOR gets the default flavour", () => {
    assert.equal(registry.find(proxyWith(), TYPE_URL.cluster), sidecarCds);
    assert.equal(registry.flavorOf(proxyWith()), DEFAULT_GENERATOR);
  });
  await t.step("GENERATOR=grpc gets the grpc flavour and never falls back to sidecar generators", () => {
    assert.equal(registry.find(proxyWith("grpc"), TYPE_URL.cluster), grpcCds);
    assert.equal(registry.find(proxyWith("grpc"), TYPE_URL.listener), undefined);
  });
  await t.step("an unregistered GENERATOR value gets the default flavour", () => {
    assert.equal(registry.find(proxyWith("unknown"), TYPE_URL.listener), sidecarLds);
  });
  await t.step("describe lists flavours and types", () => {
    assert.deepEqual(registry.describe(), {
      default: [TYPE_URL.cluster, TYPE_URL.listener].sort(),
      grpc: [TYPE_URL.cluster],
    });
  });
  await t.step("registering a type twice in one flavour is refused", () => {
    assert.throws(() => registry.register(generator(TYPE_URL.cluster)), /already has a generator/);
  });
});

Deno.test("cacheKey keys a long input by its digest: short, equal for equal inputs, distinct for others", () => {
  const long = (tail: string) => "x".repeat(600_000) + tail;
  const a = cacheKey("t", ["envoy", long("a")], []).id;
  assert.ok(a.length < 100, `a short id, got ${a.length} characters`);
  assert.match(a, /^t sha256:[A-Za-z0-9_-]{43}$/);
  assert.equal(cacheKey("t", ["envoy", long("a")], []).id, a);
  assert.notEqual(cacheKey("t", ["envoy", long("b")], []).id, a);
  assert.notEqual(cacheKey("u", ["envoy", long("a")], []).id, a);
  assert.equal(
    cacheKey("t", ["short"], []).id,
    `t ["short"]`,
    "a short input stays readable in /debug/cachez",
  );
});

Deno.test("cacheKey keeps distinct inputs distinct", () => {
  assert.notEqual(cacheKey("t", ["a,b"], []).id, cacheKey("t", ["a", "b"], []).id);
  assert.notEqual(cacheKey("t1", ["a"], []).id, cacheKey("t2", ["a"], []).id);
  assert.equal(cacheKey("t", ["a", 1, true, null], ["dep"]).id, cacheKey("t", ["a", 1, true, null], []).id);
});
