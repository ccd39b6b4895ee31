/**
 * Requests the server refuses or leaves unanswered, as fast as one client can send them: ADS streams whose
 * first request names a malformed node (all on one HTTP/2 connection, so only the refusals are measured, not
 * connection churn), requests without a type URL on one admitted stream, and malformed bodies posted to the
 * validation webhook. What the server logs for them is the cost: each is counted in a metric, and logged at
 * most once per peer (or status, or reason) an interval.
 *
 * @module
 */
import * as grpc from "@grpc/grpc-js";
import http2 from "node:http2";
import { TYPE_URL } from "../../proto/type_urls.ts";
import { loadEnvoySchema } from "../../proto/envoy_schema.ts";
import { adsClient, AdsStream, attackerNode } from "./ads_stream.ts";

/** Sizes of the attack. */
export interface BadRequestsSizes {
  /** ADS streams opened with a malformed node, each refused with INVALID_ARGUMENT. */
  readonly refusedStreams: number;
  /** Requests without a type URL on one admitted stream. */
  readonly untyped: number;
  /** Bodies that are not JSON, posted to `/validate` over HTTP/2 on one connection. */
  readonly webhookPosts: number;
}

const IN_FLIGHT = 50;

/** Runs `count` tasks, `IN_FLIGHT` at a time. */
async function inBatches(count: number, task: (i: number) => Promise<void>): Promise<void> {
  for (let start = 0; start < count; start += IN_FLIGHT) {
    await Promise.all(
      Array.from({ length: Math.min(IN_FLIGHT, count - start) }, (_, k) => task(start + k)),
    );
  }
}

/** Opens `count` streams on one connection, each with a malformed node; resolves with their end codes. */
async function refusedStreams(grpcAddr: string, count: number): Promise<Record<string, number>> {
  const type = loadEnvoySchema().lookupType("envoy.service.discovery.v3.DiscoveryRequest");
  const client = adsClient(grpcAddr);
  const codes: Record<string, number> = {};
  await inBatches(count, (i) =>
    new Promise<void>((resolve) => {
      // deno-lint-ignore no-explicit-any
      const call = (client as any).StreamAggregatedResources() as grpc.ClientDuplexStream<
        Uint8Array,
        Uint8Array
      >;
      call.on("data", () => {});
      call.on("error", () => {});
      call.on("status", (s: grpc.StatusObject) => {
        codes[grpc.status[s.code]] = (codes[grpc.status[s.code]] ?? 0) + 1;
        resolve();
      });
      const node = { id: `sidecar~not-an-address-${i}~bad.attack~attack.svc.cluster.local` };
      call.write(type.encode(type.fromObject({ node, type_url: TYPE_URL.cluster })).finish());
    }));
  client.close();
  return codes;
}

/** Sends `count` requests without a type URL on one admitted stream, then asks for listeners. */
async function untypedRequests(grpcAddr: string, count: number): Promise<Record<string, unknown>> {
  const stream = new AdsStream(grpcAddr, false);
  await stream.write({ node: attackerNode(0), type_url: TYPE_URL.listener });
  for (let i = 0; i < count && stream.ended === undefined; i++) await stream.write({ type_url: "" });
  await stream.write({ type_url: TYPE_URL.listener });
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const notes = { responses: stream.responses, ended: stream.ended };
  stream.close();
  return notes;
}

/** Posts `count` bodies that are not JSON to `/validate` on one HTTP/2 connection; resolves with the statuses. */
async function webhookPosts(httpsAddr: string, count: number): Promise<Record<string, number>> {
  const session = http2.connect(`https://${httpsAddr}`, { rejectUnauthorized: false });
  session.on("error", () => {});
  const statuses: Record<string, number> = {};
  await inBatches(count, (i) =>
    new Promise<void>((resolve) => {
      const stream = session.request({
        ":method": "POST",
        ":path": "/validate",
        "content-type": "application/json",
      });
      stream.on("response", (headers) => {
        const status = String(headers[":status"]);
        statuses[status] = (statuses[status] ?? 0) + 1;
      });
      stream.on("error", () => {
        statuses.error = (statuses.error ?? 0) + 1;
        resolve();
      });
      stream.on("close", () => resolve());
      stream.resume();
      stream.end(`not json ${i}`);
    }));
  session.close();
  return statuses;
}

/** Runs the attack; resolves with what it sent and saw. */
export async function badRequests(
  grpcAddr: string,
  httpsAddr: string,
  sizes: BadRequestsSizes,
): Promise<Record<string, unknown>> {
  return {
    refusedStreams: await refusedStreams(grpcAddr, sizes.refusedStreams),
    untyped: await untypedRequests(grpcAddr, sizes.untyped),
    webhookPosts: await webhookPosts(httpsAddr, sizes.webhookPosts),
  };
}
