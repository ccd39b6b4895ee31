import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import { ADS_SERVICE_DEFINITION } from "@mesh/proto/ads_service";
import { frameDiscoveryResponse } from "@mesh/proto/discovery_frame";
import { loadEnvoySchema } from "@mesh/proto/envoy_schema";
import { encodeNameTableAny, NAME_TABLE_TYPE_URL, type NameTable } from "@mesh/proto/name_table";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { startGrpcServer } from "@mesh/shared/grpc/grpc_server";
import { silentLogger } from "@mesh/shared/log/logger";
import { waitFor } from "@mesh/shared/testing/wait_for";
import { responseTypeUrl } from "./name_table_stream.ts";
import { startXdsProxy } from "./xds_proxy.ts";

const requestType = loadEnvoySchema().lookupType("envoy.service.discovery.v3.DiscoveryRequest");
type Request = { type_url?: string; response_nonce?: string; node?: { id?: string }; error_detail?: unknown };

const TABLE: NameTable = {
  "db.example.com": { ips: ["10.20.0.1"], registry: "External", shortname: "", namespace: "" },
};

/**
 * A discovery server that answers a name table request with `table` (or bytes that are none), and, once the
 * agent acknowledged it, the proxy's cluster request: the proxy's first response is then the probe that the
 * name table never reached it.
 */
async function ndsServer(tableAny: Uint8Array, next?: Uint8Array) {
  const requests: Request[] = [];
  let streams = 0;
  const server = await startGrpcServer({
    name: "Upstream",
    listen: { tcp: "127.0.0.1:0", flag: "--testAddr" },
    logger: silentLogger,
    services: [{
      definition: ADS_SERVICE_DEFINITION,
      implementation: {
        StreamAggregatedResources: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
          // With `next`, the first stream ends after the first ACK and the second serves `next`.
          const stream = ++streams;
          call.on("data", (bytes: Buffer) => {
            const request = requestType.toObject(requestType.decode(bytes)) as Request;
            requests.push(request);
            if (request.type_url === NAME_TABLE_TYPE_URL && !request.response_nonce) {
              call.write(Buffer.from(frameDiscoveryResponse({
                version_info: `v${stream}`,
                resources: [stream > 1 && next ? next : tableAny],
                type_url: NAME_TABLE_TYPE_URL,
                nonce: `nds-${stream}`,
              })));
            } else if (request.type_url === NAME_TABLE_TYPE_URL && next && stream === 1) {
              call.end();
            } else if (request.type_url === NAME_TABLE_TYPE_URL) {
              call.write(Buffer.from(frameDiscoveryResponse({
                version_info: "v1",
                resources: [],
                type_url: TYPE_URL.cluster,
                nonce: "cds-1",
              })));
            }
          });
          call.on("end", () => call.end());
        },
        DeltaAggregatedResources: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => call.end(),
      } as never,
    }],
  });
  return { server, requests };
}

async function relay(tableAny: Uint8Array, next?: Uint8Array) {
  const upstream = await ndsServer(tableAny, next);
  const dir = await Deno.makeTempDir({ prefix: "name_table_stream_test_" });
  const tables: NameTable[] = [];
  const proxy = await startXdsProxy({
    socket: `${dir}/xds.sock`,
    upstream: { address: upstream.server.address, mutualTls: false, serverName: "unused" },
    secrets: { current: undefined, onChange: () => () => {} },
    log: silentLogger,
    maxReceiveMessageBytes: 16 * 1024 * 1024,
    nameTable: { onTable: (table) => tables.push(table) },
  });
  const Client = grpc.makeClientConstructor(ADS_SERVICE_DEFINITION, "AggregatedDiscoveryService");
  const client = new Client(`unix:${dir}/xds.sock`, grpc.credentials.createInsecure());
  // deno-lint-ignore no-explicit-any
  const call = (client as any).StreamAggregatedResources() as grpc.ClientDuplexStream<Buffer, Buffer>;
  call.on("error", () => {});
  const first = new Promise<Uint8Array>((resolve) => call.once("data", (b: Buffer) => resolve(b)));
  call.write(Buffer.from(
    requestType.encode(requestType.fromObject({
      type_url: TYPE_URL.cluster,
      node: { id: "sidecar~10.0.0.1~app.shop~shop.svc.cluster.local" },
    })).finish(),
  ));
  return {
    requests: upstream.requests,
    tables,
    first,
    async close() {
      call.cancel();
      client.close();
      await proxy.close(0);
      await upstream.server.close(0);
      await Deno.remove(dir, { recursive: true });
    },
  };
}

Deno.test("the xDS proxy asks for the name table after the proxy's first request, keeps it and acknowledges it", async () => {
  const run = await relay(encodeNameTableAny(NAME_TABLE_TYPE_URL, TABLE));
  try {
    assert.equal(responseTypeUrl(await run.first), TYPE_URL.cluster, "the proxy never sees the name table");
    assert.deepEqual(run.tables, [TABLE]);
    assert.deepEqual(run.requests.map((r) => [r.type_url, r.response_nonce ?? ""]), [
      [TYPE_URL.cluster, ""],
      [NAME_TABLE_TYPE_URL, ""],
      [NAME_TABLE_TYPE_URL, "nds-1"],
    ]);
    assert.equal(run.requests[0].node?.id, "sidecar~10.0.0.1~app.shop~shop.svc.cluster.local");
    assert.equal(run.requests[2].error_detail, undefined);
  } finally {
    await run.close();
  }
});

Deno.test("the xDS proxy refuses a name table it cannot read and hands nothing to the DNS proxy", async () => {
  const run = await relay(encodeNameTableAny("type.googleapis.com/other.Thing", TABLE));
  try {
    assert.equal(responseTypeUrl(await run.first), TYPE_URL.cluster);
    assert.deepEqual(run.tables, []);
    assert.ok(run.requests[2].error_detail, "a NACK");
  } finally {
    await run.close();
  }
});

Deno.test("after the upstream stream is lost the xDS proxy asks for the name table again and takes the new one", async () => {
  const second: NameTable = {
    "db.example.com": { ips: ["10.20.0.2"], registry: "External", shortname: "", namespace: "" },
  };
  const run = await relay(
    encodeNameTableAny(NAME_TABLE_TYPE_URL, TABLE),
    encodeNameTableAny(NAME_TABLE_TYPE_URL, second),
  );
  try {
    await waitFor(() => run.tables.length === 2, "the name table of the second upstream stream");
    assert.deepEqual(run.tables, [TABLE, second]);
    // The second stream: the proxy's request replayed with its node, then the agent's own.
    const replayed = run.requests.slice(3);
    assert.deepEqual(replayed.slice(0, 2).map((r) => r.type_url), [TYPE_URL.cluster, NAME_TABLE_TYPE_URL]);
    assert.equal(replayed[0].node?.id, "sidecar~10.0.0.1~app.shop~shop.svc.cluster.local");
  } finally {
    await run.close();
  }
});

Deno.test("responseTypeUrl reads the type URL past the resources, and gives empty for bytes that say nothing", () => {
  const bytes = frameDiscoveryResponse({
    version_info: "v",
    resources: [new Uint8Array(300).fill(7)],
    type_url: NAME_TABLE_TYPE_URL,
    nonce: "n",
  });
  assert.equal(responseTypeUrl(bytes), NAME_TABLE_TYPE_URL);
  assert.equal(responseTypeUrl(Uint8Array.of(0x12, 0xff)), "");
});
