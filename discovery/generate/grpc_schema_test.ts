import assert from "node:assert/strict";
import { decodeAny, encodeAny } from "@mesh/proto/any_codec";
import { formatPgvViolations, validatePgvAny } from "@mesh/proto/pgv_validate";
import { isCacheable } from "./generator.ts";
import { grpcGenerators } from "./grpc_generators.ts";
import { grpcTargets } from "./grpc_target.ts";
import { GREETER, grpcProxy, richWorld } from "./_test_world.ts";

Deno.test("Every resource the gRPC generators emit encodes with Envoy's schema and passes its validation rules", async (t) => {
  const world = richWorld();
  const push = world.push();
  const proxies = [grpcProxy("example"), grpcProxy("other", { role: "x" })];
  let checked = 0;
  for (const generator of grpcGenerators()) {
    for (const proxy of proxies) {
      const targets = grpcTargets(push.derived, [], proxy, push.servicesVisibleTo(proxy));
      const requests: string[][] = [[], ["greeter:7070", "foo.wild.example.com:8443", "10.0.0.1:7070"]];
      // Specific names for the types clients never ask for by wildcard.
      requests.push(targets.map((t) => t.name));
      for (const names of requests) {
        await t.step(
          `${generator.typeUrl.split(".").at(-1)} for ${proxy.namespace} [${names.length} names]`,
          () => {
            const resources = generator.generate(proxy, push, { names, full: true });
            for (const resource of resources) {
              assert.ok(isCacheable(resource), `${resource.name} carries a cache key`);
              const bytes = encodeAny(generator.typeUrl, resource.build());
              const decoded = decodeAny(bytes);
              assert.equal(decoded.typeUrl, generator.typeUrl);
              assert.deepEqual(
                encodeAny(generator.typeUrl, decoded.resource),
                bytes,
                `${resource.name} round-trips`,
              );
              const violations = validatePgvAny(bytes);
              assert.equal(violations.length, 0, `${resource.name}: ${formatPgvViolations(violations)}`);
              checked++;
            }
          },
        );
      }
    }
  }
  await t.step("the check covered every type with many resources", () => {
    assert.ok(checked > 40, `only ${checked} resources checked`);
  });
});

Deno.test("The rich mesh exercises the features the schema test is meant to cover", () => {
  const world = richWorld();
  const push = world.push();
  const proxy = grpcProxy("example");
  const [cds, , lds, rds] = grpcGenerators();
  const text = (g: typeof cds, names: string[] = []) =>
    JSON.stringify(g.generate(proxy, push, { names, full: true }).map((r) => isCacheable(r) ? r.build() : r));
  const routes = text(rds, [`${GREETER}:7070`, "multi.example.svc.cluster.local:9090"]);
  for (
    const feature of [
      "weighted_clusters",
      "safe_regex",
      "invert_match",
      "query_parameters",
      "retry_policy",
      "max_stream_duration",
      "typed_per_filter_config",
      "hash_policy",
      "prefix_rewrite",
    ]
  ) {
    assert.ok(routes.includes(feature), `routes use ${feature}`);
  }
  const clusters = text(cds);
  for (
    const feature of [
      "LEAST_REQUEST",
      "RANDOM",
      "RING_HASH",
      "LOGICAL_DNS",
      "outlier_detection",
      "*.wild.example.com",
    ]
  ) {
    assert.ok(clusters.includes(feature), `clusters use ${feature}`);
  }
  assert.ok(text(lds).includes("api.example.com:443"));
});
