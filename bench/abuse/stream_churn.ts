/**
 * ADS streams cancelled while their answer is still queued, round after round: each round opens `streams` ADS
 * streams on each of `connections` HTTP/2 connections (raw `node:http2`, so the client's flow-control window
 * is exactly `windowBytes` a stream and nothing it is sent is ever read past the first chunk), each asking as an
 * unscoped Envoy sidecar for every cluster and listener of the mesh (its largest answers), waits `holdMs` for
 * the server to queue its answers, then resets every stream with RST_STREAM(CANCEL), keeping the connections
 * for the next round. On Deno 2.9.3 a server stream that closes with data queued is never freed unless the
 * server works around it (docs/deno_pin.md), so what this leaves grows with every round. With
 * `freshConnections`, each round opens its connections anew and destroys them once its streams are cancelled:
 * a fleet of proxies that come and go, whose closed sessions 2.9.3 never frees natively.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import http2 from "node:http2";
import type protobuf from "protobufjs";
import { ADS_SERVICE_DEFINITION } from "../../proto/ads_service.ts";
import { loadEnvoySchema } from "../../proto/envoy_schema.ts";
import { jsonToStruct } from "../../proto/struct_json.ts";
import { TYPE_URL } from "../../proto/type_urls.ts";

/** Sizes of the attack. */
export interface StreamChurnSizes {
  /** Connections, all kept for every round. */
  readonly connections: number;
  /** Streams opened on each connection each round. */
  readonly streams: number;
  readonly rounds: number;
  /** Milliseconds between opening a round's streams and cancelling them. */
  readonly holdMs: number;
  /** The client's initial HTTP/2 window of each stream (SETTINGS_INITIAL_WINDOW_SIZE). */
  readonly windowBytes: number;
  /** New connections every round, destroyed at its end (1), or the same ones for every round (0, absent). */
  readonly freshConnections?: number;
}

const ADS_PATH = ADS_SERVICE_DEFINITION.StreamAggregatedResources.path;
/** gRPC's RESOURCE_EXHAUSTED, the status of a stream refused by an admission bound. */
const RESOURCE_EXHAUSTED = "8";

/** The gRPC frames of one stream's requests: every cluster, then every listener, as Envoy sidecar `i`. */
function subscriptionFrames(type: protobuf.Type, i: number): Uint8Array {
  const node = {
    id: `sidecar~10.252.${Math.floor(i / 250)}.${(i % 250) + 1}~churn-${i}.attack~attack.svc.cluster.local`,
    metadata: jsonToStruct({ NAMESPACE: "attack" }),
  };
  const messages = [TYPE_URL.cluster, TYPE_URL.listener].map((type_url, k) =>
    type.encode(type.fromObject({ ...(k === 0 ? { node } : {}), type_url })).finish()
  );
  return Buffer.concat(messages.map((message) => {
    const frame = Buffer.alloc(5 + message.length);
    frame.writeUInt32BE(message.length, 1);
    frame.set(message, 5);
    return frame;
  }));
}

/** What the streams of the attack saw, summed. */
interface Tally {
  opened: number;
  cancelled: number;
  /** Streams that received at least one byte of an answer before their cancel. */
  answered: number;
  /** Streams the server refused (RESOURCE_EXHAUSTED) or ended before the cancel. */
  refused: number;
  endedByServer: number;
  bytesReceived: number;
}

/** Opens one stream, reads its first chunk of answer and stops reading. */
function openStream(
  session: http2.ClientHttp2Session,
  frames: Uint8Array,
  tally: Tally,
): http2.ClientHttp2Stream {
  const stream = session.request({
    ":method": "POST",
    ":path": ADS_PATH,
    "content-type": "application/grpc",
    te: "trailers",
  });
  tally.opened++;
  stream.on("error", () => {});
  stream.on("response", (headers) => {
    if (headers["grpc-status"] === RESOURCE_EXHAUSTED) tally.refused++;
  });
  stream.on("trailers", () => tally.endedByServer++);
  stream.once("data", (chunk: Buffer) => {
    // A paused stream's data is not consumed, so the client grants the server no more window.
    stream.pause();
    tally.answered++;
    tally.bytesReceived += chunk.length;
  });
  stream.write(frames);
  return stream;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs the attack; resolves with what it sent and saw. */
export async function streamChurn(
  grpcAddr: string,
  sizes: StreamChurnSizes,
): Promise<Record<string, unknown>> {
  const connect = () =>
    Array.from({ length: sizes.connections }, () => {
      const session = http2.connect(`http://${grpcAddr}`, {
        settings: { initialWindowSize: sizes.windowBytes },
      });
      session.on("error", () => {});
      return session;
    });
  let sessions = connect();
  let connectionsOpened = sessions.length;
  const requestType = loadEnvoySchema().lookupType("envoy.service.discovery.v3.DiscoveryRequest");
  const tally: Tally = {
    opened: 0,
    cancelled: 0,
    answered: 0,
    refused: 0,
    endedByServer: 0,
    bytesReceived: 0,
  };
  let rounds = 0;
  for (; rounds < sizes.rounds; rounds++) {
    if (sizes.freshConnections === 1 && rounds > 0) {
      for (const session of sessions) session.destroy();
      sessions = connect();
      connectionsOpened += sessions.length;
    }
    const open = sessions.filter((session) => !session.closed && !session.destroyed);
    if (open.length === 0) break;
    const streams = open.flatMap((session, c) =>
      Array.from(
        { length: sizes.streams },
        (_, s) => openStream(session, subscriptionFrames(requestType, c * sizes.streams + s), tally),
      )
    );
    await sleep(sizes.holdMs);
    for (const stream of streams) {
      if (stream.closed || stream.destroyed) continue;
      stream.close(http2.constants.NGHTTP2_CANCEL);
      tally.cancelled++;
    }
    // The server sees the resets and frees the streams' admission before the next round opens more.
    await sleep(Math.min(1_000, sizes.holdMs));
  }
  const notes = {
    rounds,
    connectionsOpened,
    connectionsOpen: sessions.filter((session) => !session.closed && !session.destroyed).length,
    ...tally,
  };
  for (const session of sessions) session.destroy();
  return notes;
}
