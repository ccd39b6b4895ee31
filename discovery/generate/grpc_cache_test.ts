import assert from "node:assert/strict";
import { decodeAny } from "@mesh/proto/any_codec";
import { loadEnvoySchema } from "@mesh/proto/envoy_schema";
import { TYPE_URL } from "@mesh/proto/type_urls";
import type { PushContext } from "../push/push_context.ts";
import { GeneratorRegistry } from "./generator.ts";
import { buildResources } from "../xds/response_builder.ts";
import { XdsCache } from "../xds/xds_cache.ts";
import { registerGrpcGenerators } from "./grpc_generators.ts";
import { GREETER, greeterResources, greeterSplit, grpcProxy, networking, World } from "./_test_world.ts";

const NAME = `${GREETER}:7070`;

function server() {
  const generators = registerGrpcGenerators(new GeneratorRegistry<PushContext>());
  const cache = new XdsCache({ enabled: true, maxEntries: 0, stats: false });
  return { generators, cache, schema: loadEnvoySchema() };
}

Deno.test("The xDS server's cache serves gRPC resources once per version of their inputs", async (t) => {
  const deps = server();
  const world = new World().apply(...greeterResources(), greeterSplit(80, 20));
  let push = world.push();
  const routes = (proxy = grpcProxy()) =>
    buildResources(deps, proxy, TYPE_URL.route, push, { names: [NAME], full: true })!;

  await t.step("gRPC proxies are served by the grpc flavour only", () => {
    assert.equal(deps.generators.flavorOf(grpcProxy()), "grpc");
    assert.deepEqual(
      deps.generators.describe().grpc,
      [
        TYPE_URL.cluster,
        TYPE_URL.endpoint,
        TYPE_URL.listener,
        TYPE_URL.route,
      ].sort(),
    );
  });

  await t.step("two clients of the same shape share one encoded route", () => {
    const first = routes();
    const second = routes(grpcProxy("example", { app: "client" }, "10.9.9.8"));
    assert.equal(first[0], second[0]);
    assert.equal(deps.cache.stats().misses, 1);
    assert.equal(deps.cache.stats().hits, 1);
  });

  await t.step("a weight change on disk reaches the route through invalidation and a new key", () => {
    const before = routes()[0];
    world.apply(greeterSplit(0, 100));
    push = world.push();
    assert.equal(deps.cache.invalidate(["VirtualService/example/greeter"]), 1);
    const after = routes()[0];
    assert.notEqual(after.version, before.version);
    const config = decodeAny(after.encoded).resource as {
      virtual_hosts: { routes: { route: { cluster: string } }[] }[];
    };
    assert.equal(config.virtual_hosts[0].routes[0].route.cluster, `outbound|7070|v2|${GREETER}`);
  });

  await t.step(
    "even without invalidation a stale entry is never served, because the key names the inputs",
    () => {
      world.apply(greeterSplit(50, 50));
      push = world.push();
      const config = decodeAny(routes()[0].encoded).resource as {
        virtual_hosts: { routes: { route: { weighted_clusters?: unknown } }[] }[];
      };
      assert.ok(config.virtual_hosts[0].routes[0].route.weighted_clusters);
    },
  );

  await t.step(
    "clients whose labels select different routes get different bytes from the shared cache",
    () => {
      world.apply(networking("VirtualService", "example", "greeter", {
        hosts: ["greeter"],
        http: [
          {
            match: [{ sourceLabels: { track: "canary" } }],
            route: [{ destination: { host: "greeter", subset: "v2" } }],
          },
          { route: [{ destination: { host: "greeter", subset: "v1" } }] },
        ],
      }));
      push = world.push();
      const clusterOf = (labels: Record<string, string>) => {
        const config = decodeAny(routes(grpcProxy("example", labels)).at(0)!.encoded).resource as {
          virtual_hosts: { routes: { route: { cluster: string } }[] }[];
        };
        return config.virtual_hosts[0].routes[0].route.cluster;
      };
      assert.equal(clusterOf({ track: "canary" }), `outbound|7070|v2|${GREETER}`);
      assert.equal(clusterOf({}), `outbound|7070|v1|${GREETER}`);
      assert.equal(clusterOf({ track: "canary" }), `outbound|7070|v2|${GREETER}`);
    },
  );
});
