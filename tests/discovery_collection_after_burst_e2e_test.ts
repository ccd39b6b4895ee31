import assert from "node:assert/strict";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { ADS_SERVICE_DEFINITION } from "../proto/ads_service.ts";
import { loadEnvoySchema } from "../proto/envoy_schema.ts";
import { TYPE_URL } from "../proto/type_urls.ts";
import { writeGreeterConfig } from "./helpers/greeter_mesh.ts";
import { discoveryAddresses, discoveryArgs, startProgram } from "./helpers/programs.ts";

const ADS_CLIENT = grpc.makeClientConstructor(ADS_SERVICE_DEFINITION, "AggregatedDiscoveryService");

/** One delta ADS stream that subscribes to `requests` × `names` endpoint names, then leaves. */
async function subscribeMany(grpcAddr: string, requests: number, names: number): Promise<void> {
  const type = loadEnvoySchema().lookupType("envoy.service.discovery.v3.DeltaDiscoveryRequest");
  const client = new ADS_CLIENT(grpcAddr, grpc.credentials.createInsecure());
  const call = (client as unknown as Record<string, () => grpc.ClientDuplexStream<Uint8Array, Uint8Array>>)
    .DeltaAggregatedResources();
  call.on("error", () => {});
  const answered = Promise.withResolvers<void>();
  let responses = 0;
  call.on("data", () => ++responses === requests && answered.resolve());
  for (let r = 0; r < requests; r++) {
    const request = {
      ...(r === 0 ? { node: { id: "sidecar~10.9.0.1~burst-0.default~default.svc.cluster.local" } } : {}),
      type_url: TYPE_URL.endpoint,
      resource_names_subscribe: Array.from({ length: names }, (_, i) => `outbound|80||r${r}-n${i}.burst.svc`),
    };
    await new Promise<void>((resolve, reject) =>
      call.write(
        type.encode(type.fromObject(request)).finish(),
        (error?: Error) => error ? reject(error) : resolve(),
      )
    );
  }
  await answered.promise;
  call.end();
  call.cancel();
  client.close();
}

async function collections(monitoringAddr: string): Promise<number> {
  const text = await (await fetch(`http://${monitoringAddr}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith("discovery_heap_collections "));
  return line === undefined ? 0 : Number(line.split(" ")[1]);
}

Deno.test(
  "mesh-discovery started by its task collects its heap once after one delta stream's burst of names left, and not at 0",
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "collection_after_burst_e2e_" });
    try {
      await Deno.mkdir(join(dir, "config"));
      await writeGreeterConfig(join(dir, "config"), { v1: 1, v2: 2 }, 50, 50);
      const flags = ["--registries", "Mock", "--configDir", join(dir, "config"), "--log_as_json"];
      const addresses = discoveryAddresses();
      const server = startProgram("mesh-discovery", discoveryArgs(addresses, flags), {
        DISCOVERY_COLLECT_AFTER_BURST_BYTES: "262144",
      });
      try {
        await server.waitFor(/"msg":"Collection after a burst on"/);
        await server.waitFor(/"msg":"discovery server started"/);
        assert.equal(await collections(addresses.monitoringAddr), 0);
        // About 450 KB of names on one stream: a stream count never moves for it.
        await subscribeMany(addresses.grpcAddr, 4, 3_000);
        const [line] = await server.waitFor(
          /\{[^\n]*"msg":"Collected the heap after a burst"[^\n]*\}/,
          60_000,
        );
        assert.equal(typeof JSON.parse(line).ms, "number");
        assert.equal(await collections(addresses.monitoringAddr), 1);
      } finally {
        await server.stop();
      }
      const off = startProgram("mesh-discovery", discoveryArgs(discoveryAddresses(), flags), {
        DISCOVERY_COLLECT_AFTER_BURST_BYTES: "0",
      });
      try {
        await off.waitFor(/"msg":"discovery server started"/);
        assert.doesNotMatch(off.stdout + off.stderr, /Collection after a burst/);
      } finally {
        await off.stop();
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);
