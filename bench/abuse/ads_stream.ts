/**
 * One raw ADS stream for the attackers: its own HTTP/2 connection (grpc-js), requests encoded from plain
 * objects with the Envoy schema, writes that wait for the transport to drain, responses counted and handed
 * over as bytes.
 *
 * @module
 */
import * as grpc from "@grpc/grpc-js";
import type protobuf from "protobufjs";
import { ADS_SERVICE_DEFINITION } from "../../proto/ads_service.ts";
import { loadEnvoySchema } from "../../proto/envoy_schema.ts";
import { jsonToStruct } from "../../proto/struct_json.ts";

const ADS_CLIENT = grpc.makeClientConstructor(ADS_SERVICE_DEFINITION, "AggregatedDiscoveryService");

/** A plaintext ADS client on a connection of its own (its own subchannel pool), taking responses of any size. */
export function adsClient(addr: string): grpc.Client {
  return new ADS_CLIENT(addr, grpc.credentials.createInsecure(), {
    "grpc.max_receive_message_length": -1,
    "grpc.max_send_message_length": -1,
    "grpc.use_local_subchannel_pool": 1,
  });
}

/** The node of attacker `i`: a proxyless gRPC client in namespace `attack`. */
export function attackerNode(i: number): Record<string, unknown> {
  return {
    id: `sidecar~10.251.${Math.floor(i / 250)}.${
      (i % 250) + 1
    }~attacker-${i}.attack~attack.svc.cluster.local`,
    metadata: jsonToStruct({ GENERATOR: "grpc", NAMESPACE: "attack" }),
  };
}

/** An open ADS stream. */
export class AdsStream {
  readonly #client: grpc.Client;
  readonly #call: grpc.ClientDuplexStream<Uint8Array, Uint8Array>;
  readonly #type: protobuf.Type;
  /** Responses received. */
  responses = 0;
  /** How the stream ended, once it has. */
  ended: string | undefined;

  constructor(addr: string, delta: boolean, onResponse: (bytes: Uint8Array) => void = () => {}) {
    this.#type = loadEnvoySchema().lookupType(
      delta
        ? "envoy.service.discovery.v3.DeltaDiscoveryRequest"
        : "envoy.service.discovery.v3.DiscoveryRequest",
    );
    this.#client = adsClient(addr);
    const method = delta ? "DeltaAggregatedResources" : "StreamAggregatedResources";
    // deno-lint-ignore no-explicit-any
    this.#call = (this.#client as any)[method]() as grpc.ClientDuplexStream<Uint8Array, Uint8Array>;
    this.#call.on("data", (bytes: Uint8Array) => {
      this.responses++;
      onResponse(bytes);
    });
    this.#call.on("status", (s: grpc.StatusObject) => this.ended ??= `${grpc.status[s.code]} ${s.details}`);
    this.#call.on("error", () => {});
  }

  /** Writes one request; resolves once the transport takes more (or the stream has ended). */
  async write(request: Record<string, unknown>): Promise<void> {
    if (this.ended !== undefined) return;
    const bytes = this.#type.encode(this.#type.fromObject(request)).finish();
    if (this.#call.write(bytes)) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearInterval(poll);
        resolve();
      };
      this.#call.once("drain", done);
      // A stream that ends while blocked never drains.
      const poll = setInterval(() => this.ended !== undefined && done(), 200);
    });
  }

  /** Ends the stream and closes the connection. */
  close(): void {
    this.#call.end();
    this.#call.cancel();
    this.#client.close();
  }
}
