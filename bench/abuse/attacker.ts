/**
 * The attacker process of the abuse benchmark: runs one attack against a server and exits.
 *
 *   deno run --allow-net=127.0.0.1 --allow-read --allow-env --unsafely-ignore-certificate-errors=127.0.0.1 \
 *     bench/abuse/attacker.ts '<JSON AttackOrder>'
 *
 * Prints one JSON line `{"done": {...}}` with what it sent and saw, or `{"error": "..."}`.
 *
 * @module
 */
import { badRequests, type BadRequestsSizes } from "./bad_requests.ts";
import { csrFlood, type CsrFloodSizes } from "./csr_flood.ts";
import { deltaNames, type DeltaNamesSizes } from "./delta_names.ts";
import { halfOpen, type HalfOpenSizes } from "./half_open.ts";
import { handshakeFlood, type HandshakeFloodSizes } from "./handshake_flood.ts";
import { nackFlood, type NackFloodSizes } from "./nack_flood.ts";
import { shapeFlood, type ShapeFloodSizes } from "./shape_flood.ts";
import { slotFlood, type SlotFloodSizes } from "./slot_flood.ts";
import { streamChurn, type StreamChurnSizes } from "./stream_churn.ts";
import { webhookBodies, type WebhookBodiesSizes } from "./webhook_bodies.ts";
import { webhookCpu, type WebhookCpuSizes } from "./webhook_cpu.ts";
import { pipelineFlood, type PipelineFloodSizes } from "./pipeline_flood.ts";

/** What the harness asks the attacker to do. */
export type AttackOrder =
  & { grpcAddr: string; secureGRPCAddr: string; httpAddr: string; httpsAddr: string; caDir?: string }
  & (
    | { kind: "delta-names"; sizes: DeltaNamesSizes }
    | { kind: "nack-flood"; sizes: NackFloodSizes }
    | { kind: "webhook-bodies"; sizes: WebhookBodiesSizes }
    | { kind: "slot-flood"; sizes: SlotFloodSizes }
    | { kind: "half-open"; sizes: HalfOpenSizes }
    | { kind: "csr"; sizes: CsrFloodSizes }
    | { kind: "stream-churn"; sizes: StreamChurnSizes }
    | { kind: "bad-requests"; sizes: BadRequestsSizes }
    | { kind: "shape-flood"; sizes: ShapeFloodSizes }
    | { kind: "handshake-flood"; sizes: HandshakeFloodSizes }
    | { kind: "webhook-cpu"; sizes: WebhookCpuSizes }
    | { kind: "pipeline-flood"; sizes: PipelineFloodSizes }
  );

function run(order: AttackOrder): Promise<Record<string, unknown>> {
  switch (order.kind) {
    case "delta-names":
      return deltaNames(order.grpcAddr, order.sizes);
    case "nack-flood":
      return nackFlood(order.grpcAddr, order.sizes);
    case "webhook-bodies":
      return webhookBodies(order.httpsAddr, order.sizes);
    case "slot-flood":
      return slotFlood(order.sizes.tls ? order.httpsAddr : order.httpAddr, order.sizes);
    case "half-open":
      return halfOpen(order.grpcAddr, order.httpAddr, order.sizes);
    case "csr":
      return csrFlood(order.secureGRPCAddr, order.caDir!, order.sizes);
    case "stream-churn":
      return streamChurn(order.grpcAddr, order.sizes);
    case "bad-requests":
      return badRequests(order.grpcAddr, order.httpsAddr, order.sizes);
    case "shape-flood":
      return shapeFlood(order.grpcAddr, order.sizes);
    case "handshake-flood":
      return handshakeFlood(order.grpcAddr, order.secureGRPCAddr, order.httpsAddr, order.sizes);
    case "webhook-cpu":
      return webhookCpu(order.httpsAddr, order.sizes);
    case "pipeline-flood":
      return pipelineFlood(order.sizes.tls ? order.httpsAddr : order.httpAddr, order.sizes);
  }
}

if (import.meta.main) {
  try {
    const done = await run(JSON.parse(Deno.args[0]) as AttackOrder);
    console.log(JSON.stringify({ done }));
    Deno.exit(0);
  } catch (error) {
    console.log(
      JSON.stringify({ error: error instanceof Error ? error.stack ?? error.message : String(error) }),
    );
    Deno.exit(1);
  }
}
