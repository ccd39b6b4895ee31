/**
 * A separate process of ADS clients that leave the way real proxies leave, to test that `mesh-discovery`
 * survives it:
 *
 *   deno run --allow-net=127.0.0.1 --allow-env tests/helpers/leaving_proxies.ts ADDR WAY CONNECTIONS STREAMS PUSHES
 *
 * Opens CONNECTIONS HTTP/2 connections with STREAMS ADS streams each. Every stream acts as a proxyless gRPC
 * client (clusters and listeners, then the endpoints and routes they name, every response ACKed) and the
 * process prints `{"ready":N}` once every stream holds a full configuration. It then waits for PUSHES pushes
 * (the caller makes the server push by adding a service), printing `{"pushed":K}` once every stream has
 * received the K-th, and leaves by WAY:
 *
 * - `goaway` (raw `node:http2`): GOAWAY(NO_ERROR) on every connection with its streams open, the socket kept
 *   1 s, then dropped;
 * - `cancel` (raw `node:http2`): RST_STREAM(CANCEL) on every stream, then the connection closed;
 * - `halfclose` (grpc-js, as an application closing its channel): every call half-closed, cancelled and its
 *   channel closed, all at once;
 * - `push` (grpc-js): waits for one more push to start (a CDS response on any stream) and leaves as in
 *   `halfclose` at that moment, while the rest of the push is still being written;
 * - `stay` (grpc-js): waits to be killed (the caller kills the process: sockets gone mid-stream).
 *
 * It prints `{"left":WAY}` and exits 0 once gone; a failure prints `{"error":"…"}` and exits 1.
 *
 * @module
 */
import http2 from "node:http2";
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import { ADS_SERVICE_DEFINITION } from "../../proto/ads_service.ts";

const ADS_PATH = ADS_SERVICE_DEFINITION.StreamAggregatedResources.path;

/** The ways of leaving this process plays. */
export const LEAVING_WAYS = ["goaway", "cancel", "halfclose", "push", "stay"] as const;
/** One way of leaving. */
export type LeavingWay = typeof LEAVING_WAYS[number];

function varint(value: number): number[] {
  const out: number[] = [];
  while (value > 0x7f) {
    out.push((value & 0x7f) | 0x80);
    value >>>= 7;
  }
  out.push(value);
  return out;
}

function field(number: number, payload: Uint8Array | string): number[] {
  const bytes = typeof payload === "string" ? new TextEncoder().encode(payload) : payload;
  return [...varint((number << 3) | 2), ...varint(bytes.length), ...bytes];
}

const TYPE = "type.googleapis.com/envoy.config.";
const CDS = `${TYPE}cluster.v3.Cluster`;
const EDS = `${TYPE}endpoint.v3.ClusterLoadAssignment`;
const LDS = `${TYPE}listener.v3.Listener`;
const RDS = `${TYPE}route.v3.RouteConfiguration`;
/** The type whose names follow from each response type: endpoints of clusters, routes named as listeners. */
const FOLLOWS: Readonly<Record<string, string>> = { [CDS]: EDS, [LDS]: RDS };

/** A DiscoveryRequest: node (proxyless gRPC), type, names, and the version and nonce it ACKs. */
function discoveryRequest(
  nodeId: string,
  typeUrl: string,
  names: readonly string[],
  ack?: { version: string; nonce: string },
): Uint8Array {
  const value = Uint8Array.from(field(3, "grpc")); // Value.string_value
  const entry = Uint8Array.from([...field(1, "GENERATOR"), ...field(2, value)]);
  const metadata = Uint8Array.from(field(1, entry)); // Struct.fields
  const node = Uint8Array.from([...field(1, nodeId), ...field(3, metadata)]);
  return Uint8Array.from([
    ...(ack ? field(1, ack.version) : []),
    ...field(2, node),
    ...names.flatMap((name) => field(3, name)),
    ...field(4, typeUrl),
    ...(ack ? field(5, ack.nonce) : []),
  ]);
}

/** A gRPC length-prefixed message. */
function grpcFrame(message: Uint8Array): Uint8Array {
  const out = new Uint8Array(5 + message.length);
  new DataView(out.buffer).setUint32(1, message.length);
  out.set(message, 5);
  return out;
}

/** The length-delimited top-level fields of a message, by field number. */
function lengthFields(bytes: Uint8Array): [number, Uint8Array][] {
  const out: [number, Uint8Array][] = [];
  let i = 0;
  const readVarint = () => {
    let result = 0, shift = 0, b: number;
    do {
      b = bytes[i++];
      result += (b & 0x7f) * 2 ** shift;
      shift += 7;
    } while (b & 0x80 && i < bytes.length);
    return result;
  };
  while (i < bytes.length) {
    const key = readVarint();
    const wire = key & 7, number = Math.floor(key / 8);
    if (wire === 0) readVarint();
    else if (wire === 2) {
      const length = readVarint();
      out.push([number, bytes.subarray(i, i + length)]);
      i += length;
    } else if (wire === 5) i += 4;
    else if (wire === 1) i += 8;
    else break;
  }
  return out;
}

/** A DiscoveryResponse's version_info (1), type_url (4), nonce (5) and resource names (Any value's field 1). */
function readResponse(
  bytes: Uint8Array,
): { version: string; typeUrl: string; nonce: string; names: string[] } {
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  let version = "", typeUrl = "", nonce = "";
  const names: string[] = [];
  for (const [number, value] of lengthFields(bytes)) {
    if (number === 1) version = text(value);
    else if (number === 4) typeUrl = text(value);
    else if (number === 5) nonce = text(value);
    else if (number === 2) {
      const resource = lengthFields(value).find(([n]) => n === 2)?.[1];
      const name = resource && lengthFields(resource).find(([n]) => n === 1)?.[1];
      if (name) names.push(text(name));
    }
  }
  return { version, typeUrl, nonce, names };
}

/** How an ADS stream writes a request message; it feeds `AdsStream.receive` each response message. */
type SendMessage = (message: Uint8Array) => void;

/**
 * One ADS stream acting as a proxyless gRPC client: watches every cluster and listener, follows them with the
 * endpoints and routes they name, ACKs every response, and counts the responses.
 */
class AdsStream {
  /** CDS responses received: the first, then one per push (each push here adds a cluster). */
  clusterResponses = 0;
  /** The types answered at least once; all four make a full configuration. */
  readonly answered = new Set<string>();
  readonly #names = new Map<string, string[]>([[CDS, []], [LDS, []]]);

  constructor(readonly nodeId: string, readonly send: SendMessage, readonly onResponse: () => void) {
    this.#request(CDS);
    this.#request(LDS);
  }

  #request(typeUrl: string, ack?: { version: string; nonce: string }): void {
    this.send(discoveryRequest(this.nodeId, typeUrl, this.#names.get(typeUrl) ?? [], ack));
  }

  /** Handles one DiscoveryResponse message. */
  receive(message: Uint8Array): void {
    const response = readResponse(message);
    this.answered.add(response.typeUrl);
    if (response.typeUrl === CDS) this.clusterResponses++;
    this.#request(response.typeUrl, response);
    const dependent = FOLLOWS[response.typeUrl];
    if (dependent !== undefined) {
      const before = this.#names.get(dependent);
      if (!before || before.join("\n") !== response.names.join("\n")) {
        this.#names.set(dependent, response.names);
        this.#request(dependent);
      }
    }
    this.onResponse();
  }
}

/** Clients on raw `node:http2` sessions, to send exactly the frames of a way of leaving. */
class RawClients {
  readonly sessions: http2.ClientHttp2Session[] = [];
  readonly streams: http2.ClientHttp2Stream[] = [];

  constructor(
    addr: string,
    connections: number,
    perConnection: number,
    add: (nodeId: string, send: SendMessage) => AdsStream,
  ) {
    for (let c = 0; c < connections; c++) {
      const session = http2.connect(`http://${addr}`);
      session.on("error", () => {});
      this.sessions.push(session);
      for (let s = 0; s < perConnection; s++) {
        const stream = session.request({
          ":method": "POST",
          ":path": ADS_PATH,
          "content-type": "application/grpc",
          te: "trailers",
        });
        stream.on("error", () => {});
        this.streams.push(stream);
        const ads = add(nodeIdOf(c, s), (message) => {
          if (!stream.destroyed && stream.writable) stream.write(grpcFrame(message));
        });
        let pending = Buffer.alloc(0);
        stream.on("data", (chunk: Buffer) => {
          pending = Buffer.concat([pending, chunk]);
          while (pending.length >= 5 && pending.length >= 5 + pending.readUInt32BE(1)) {
            const length = pending.readUInt32BE(1);
            ads.receive(pending.subarray(5, 5 + length));
            pending = pending.subarray(5 + length);
          }
        });
      }
    }
  }
}

/** Clients on grpc-js channels, each its own connection, leaving as a gRPC application closing its channel. */
class GrpcClients {
  readonly channels: grpc.Client[] = [];
  readonly calls: { call: grpc.ClientDuplexStream<Uint8Array, Uint8Array>; channel: grpc.Client }[] = [];

  constructor(
    addr: string,
    connections: number,
    perConnection: number,
    add: (nodeId: string, send: SendMessage) => AdsStream,
  ) {
    for (let c = 0; c < connections; c++) {
      const channel = new AdsClient(addr, grpc.credentials.createInsecure(), {
        "grpc.use_local_subchannel_pool": 1,
        "grpc.max_receive_message_length": -1,
      });
      this.channels.push(channel);
      for (let s = 0; s < perConnection; s++) {
        // deno-lint-ignore no-explicit-any
        const call = (channel as any).StreamAggregatedResources() as grpc.ClientDuplexStream<
          Uint8Array,
          Uint8Array
        >;
        call.on("error", () => {});
        this.calls.push({ call, channel });
        const ads = add(nodeIdOf(c, s), (message) => {
          if (!call.destroyed && call.writable) call.write(message);
        });
        call.on("data", (message: Uint8Array) => ads.receive(message));
      }
    }
  }

  /** Half-closes every call, cancels it and closes its channel, all at once. */
  leave(): void {
    for (const { call, channel } of this.calls) {
      call.end();
      call.cancel();
      channel.close();
    }
  }
}

const AdsClient = grpc.makeClientConstructor(ADS_SERVICE_DEFINITION, "AggregatedDiscoveryService");

function nodeIdOf(connection: number, stream: number): string {
  return `sidecar~127.0.0.${
    1 + connection % 250
  }~leaving-${connection}-${stream}.example~example.svc.cluster.local`;
}

function print(value: unknown): void {
  Deno.stdout.writeSync(new TextEncoder().encode(JSON.stringify(value) + "\n"));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main([addr, way, connectionsArg, streamsArg, pushesArg]: string[]): Promise<void> {
  if (!LEAVING_WAYS.includes(way as LeavingWay)) {
    throw new RangeError(`Unknown way "${way}": expected one of ${LEAVING_WAYS.join(", ")}`);
  }
  const connections = Number(connectionsArg), perConnection = Number(streamsArg), pushes = Number(pushesArg);
  const streams: AdsStream[] = [];
  /** Resolves once every stream has at least `count` responses. */
  const everyStreamHas = (count: number) =>
    waitUntil(() => streams.every((s) => s.clusterResponses >= count && s.answered.size === 4));
  /** Resolves once any stream has at least `count` responses. */
  const anyStreamHas = (count: number) => waitUntil(() => streams.some((s) => s.clusterResponses >= count));
  const waiters = new Set<() => boolean>();
  const waitUntil = (done: () => boolean) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (!done()) return false;
        resolve();
        return true;
      };
      if (!check()) waiters.add(check);
    });
  const onResponse = () => {
    for (const check of [...waiters]) if (check()) waiters.delete(check);
  };
  const add = (nodeId: string, send: SendMessage) => {
    const stream = new AdsStream(nodeId, send, onResponse);
    streams.push(stream);
    return stream;
  };
  // Half-closing, pushes and kills are played by grpc-js, as real gRPC clients do them; GOAWAY and RST_STREAM
  // by raw sessions, to send exactly those frames.
  const raw = way === "goaway" || way === "cancel"
    ? new RawClients(addr, connections, perConnection, add)
    : undefined;
  const grpcClients = raw ? undefined : new GrpcClients(addr, connections, perConnection, add);
  await everyStreamHas(1);
  print({ ready: streams.length });
  for (let k = 1; k <= pushes; k++) {
    await everyStreamHas(1 + k);
    print({ pushed: k });
  }
  switch (way as LeavingWay) {
    case "stay":
      await new Promise(() => {});
      break;
    case "push":
      await anyStreamHas(2 + pushes);
      grpcClients!.leave();
      break;
    case "halfclose":
      grpcClients!.leave();
      await sleep(200);
      break;
    case "goaway":
      for (const session of raw!.sessions) session.goaway(http2.constants.NGHTTP2_NO_ERROR, 0);
      await sleep(1_000);
      for (const session of raw!.sessions) session.destroy();
      break;
    case "cancel":
      for (const stream of raw!.streams) stream.close(http2.constants.NGHTTP2_CANCEL);
      await sleep(200);
      for (const session of raw!.sessions) session.close();
      break;
  }
  print({ left: way });
}

if (import.meta.main) {
  main(Deno.args).then(
    () => Deno.exit(0),
    (error) => {
      print({ error: String(error) });
      Deno.exit(1);
    },
  );
}
