/**
 * gRPC's own xDS client code (`@grpc/grpc-js-xds`) validates every resource the gRPC generators emit, the same
 * checks it runs before it ACKs a response. Needs `--allow-sys=uid,gid`: grpc-js-xds loads its `.proto` files
 * through `fs.accessSync`, which asks Deno for the user and group ids.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import * as grpcXds from "@grpc/grpc-js-xds";
import { ClusterResourceType } from "@grpc/grpc-js-xds/build/src/xds-resource-type/cluster-resource-type.js";
import { EndpointResourceType } from "@grpc/grpc-js-xds/build/src/xds-resource-type/endpoint-resource-type.js";
import { ListenerResourceType } from "@grpc/grpc-js-xds/build/src/xds-resource-type/listener-resource-type.js";
import { RouteConfigurationResourceType } from "@grpc/grpc-js-xds/build/src/xds-resource-type/route-config-resource-type.js";
import { encodeAny } from "@mesh/proto/any_codec";
import { loadEnvoySchema } from "@mesh/proto/envoy_schema";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { isCacheable } from "./generator.ts";
import { grpcGenerators } from "./grpc_generators.ts";
import { grpcTargets } from "./grpc_target.ts";
import { GREETER, grpcProxy, richWorld } from "./_test_world.ts";

interface Decoded {
  name: string;
  error?: string;
}
interface ResourceType {
  decode(context: unknown, resource: { type_url: string; value: Buffer }): Decoded;
}

const TYPES: Record<string, ResourceType> = {
  [TYPE_URL.cluster]: ClusterResourceType.get(),
  [TYPE_URL.endpoint]: EndpointResourceType.get(),
  [TYPE_URL.listener]: ListenerResourceType.get(),
  [TYPE_URL.route]: RouteConfigurationResourceType.get(),
};

// What a client's decode context holds: its bootstrap (no certificate providers) and the server it talks to.
const CONTEXT = { bootstrap: { certificateProviders: {} }, server: undefined };

Deno.test("gRPC's xDS client accepts every resource the gRPC generators emit", async (t) => {
  // Registers gRPC's HTTP filters and load-balancing policies, which its validators look up.
  grpcXds.register();
  const anyType = loadEnvoySchema().lookupType("google.protobuf.Any");
  const push = richWorld().push();
  let accepted = 0;
  for (const generator of grpcGenerators()) {
    for (const proxy of [grpcProxy("example"), grpcProxy("other", { track: "canary" })]) {
      const all = grpcTargets(push.derived, [], proxy, push.servicesVisibleTo(proxy)).map((target) =>
        target.name
      );
      for (const names of [[], all, ["greeter:7070", `outbound|7070|v2|${GREETER}`]]) {
        await t.step(
          `${generator.typeUrl.split(".").at(-1)} for ${proxy.namespace} [${names.length}]`,
          () => {
            for (const resource of generator.generate(proxy, push, { names, full: true })) {
              assert.ok(isCacheable(resource));
              const any = anyType.decode(encodeAny(generator.typeUrl, resource.build())) as unknown as {
                type_url: string;
                value: Uint8Array;
              };
              const decoded = TYPES[generator.typeUrl].decode(CONTEXT, {
                type_url: any.type_url,
                value: Buffer.from(any.value),
              });
              assert.equal(decoded.error, undefined, `${resource.name}: ${decoded.error}`);
              assert.equal(decoded.name, resource.name);
              accepted++;
            }
          },
        );
      }
    }
  }
  await t.step("every type was checked with many resources", () => assert.ok(accepted > 40, `${accepted}`));
});
