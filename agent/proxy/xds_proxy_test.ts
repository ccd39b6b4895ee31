import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import { ADS_SERVICE_DEFINITION } from "../../proto/ads_service.ts";
import { frameDiscoveryResponse } from "../../proto/discovery_frame.ts";
import { loadEnvoySchema } from "../../proto/envoy_schema.ts";
import { TYPE_URL } from "../../proto/type_urls.ts";
import { startGrpcServer } from "../../shared/grpc/grpc_server.ts";
import { silentLogger } from "../../shared/log/logger.ts";
import { startXdsProxy } from "./xds_proxy.ts";

const requestType = loadEnvoySchema().lookupType("envoy.service.discovery.v3.DiscoveryRequest");

/** A discovery server that answers every request with `response`. */
async function fixedAdsServer(response: Uint8Array) {
  return await startGrpcServer({
    name: "Upstream",
    listen: { tcp: "127.0.0.1:0", flag: "--testAddr" },
    logger: silentLogger,
    services: [{
      definition: ADS_SERVICE_DEFINITION,
      implementation: {
        StreamAggregatedResources: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
          call.on("data", () => call.write(Buffer.from(response)));
          call.on("end", () => call.end());
        },
        DeltaAggregatedResources: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => call.end(),
      } as never,
    }],
  });
}

Deno.test("The xDS proxy relays a response of megabytes to the proxy byte for byte", async () => {
  // Several 64 KiB slices' worth, so the relay's own sending is sliced.
  const resource = new Uint8Array(1_500_000).map((_, i) => (i * 7) % 256);
  const response = frameDiscoveryResponse({
    version_info: "v1",
    resources: [resource],
    type_url: TYPE_URL.cluster,
    nonce: "n1",
  });
  const upstream = await fixedAdsServer(response);
  const dir = await Deno.makeTempDir({ prefix: "xds_proxy_test_" });
  const proxy = await startXdsProxy({
    socket: `${dir}/xds.sock`,
    upstream: { address: upstream.address, mutualTls: false, serverName: "unused" },
    secrets: { current: undefined, onChange: () => () => {} },
    log: silentLogger,
    maxReceiveMessageBytes: 16 * 1024 * 1024,
  });
  const Client = grpc.makeClientConstructor(ADS_SERVICE_DEFINITION, "AggregatedDiscoveryService");
  const client = new Client(`unix:${dir}/xds.sock`, grpc.credentials.createInsecure(), {
    "grpc.max_receive_message_length": -1,
  });
  try {
    // deno-lint-ignore no-explicit-any
    const call = (client as any).StreamAggregatedResources() as grpc.ClientDuplexStream<Buffer, Buffer>;
    call.on("error", () => {});
    const received = new Promise<Uint8Array>((resolve) => call.once("data", (b: Buffer) => resolve(b)));
    call.write(
      Buffer.from(requestType.encode(requestType.fromObject({ type_url: TYPE_URL.cluster })).finish()),
    );
    assert.deepEqual(new Uint8Array(await received), new Uint8Array(response));
    call.cancel();
  } finally {
    client.close();
    await proxy.close(0);
    await upstream.close(0);
    await Deno.remove(dir, { recursive: true });
  }
});
