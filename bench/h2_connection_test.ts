import assert from "node:assert/strict";
import { waitFor } from "../shared/testing/wait_for.ts";
import { H2Connection, type H2Transport } from "./h2_connection.ts";
import {
  CONNECTION_PREFACE,
  encodeFrame,
  encodeSettings,
  encodeWindowUpdate,
  FLAG,
  FRAME,
  type Frame,
  FrameReader,
  readUint31,
  SETTING,
} from "./h2_frames.ts";
import type { H2Stream } from "./h2_stream.ts";
import { TurnScheduler } from "./h2_turn_writer.ts";

/** A client's side of a connection in memory: what it feeds the server, and the frames the server wrote. */
class MemoryTransport implements H2Transport {
  readonly frames: Frame[] = [];
  #reader = new FrameReader(1 << 24, false);
  #incoming: Uint8Array[] = [];
  #wake: (() => void) | undefined;
  #closed = false;

  feed(...chunks: Uint8Array[]): void {
    this.#incoming.push(...chunks);
    this.#wake?.();
  }

  async read(buffer: Uint8Array): Promise<number | null> {
    while (this.#incoming.length === 0 && !this.#closed) await new Promise<void>((r) => this.#wake = r);
    const next = this.#incoming.shift();
    if (next === undefined) return null;
    const n = Math.min(buffer.length, next.length);
    buffer.set(next.subarray(0, n));
    if (n < next.length) this.#incoming.unshift(next.subarray(n));
    return n;
  }

  write(bytes: Uint8Array): Promise<number> {
    this.#reader.push(bytes, (f) => this.frames.push({ ...f, payload: f.payload.slice() }));
    return Promise.resolve(bytes.length);
  }

  close(): void {
    this.#closed = true;
    this.#wake?.();
  }

  /** Bytes of DATA the server sent on `streamId`. */
  dataOn(streamId: number): number {
    return this.frames.filter((f) => f.type === FRAME.DATA && f.streamId === streamId)
      .reduce((sum, f) => sum + f.payload.length, 0);
  }
}

/** A connection with a client that said its preface and `settings`, and opened stream 1. */
async function openStream(settings: [number, number][]) {
  const transport = new MemoryTransport();
  const streams: H2Stream[] = [];
  const connection = new H2Connection(transport, (s) => streams.push(s), new TurnScheduler());
  const served = connection.serve();
  transport.feed(
    CONNECTION_PREFACE,
    encodeSettings(settings),
    // A request header block is never decoded: any bytes do.
    encodeFrame(FRAME.HEADERS, FLAG.END_HEADERS, 1, new Uint8Array([0x83, 0x86])),
  );
  await waitFor(() => streams.length === 1, "stream 1");
  return { transport, connection, stream: streams[0], served };
}

Deno.test("a response larger than the peer's stream window waits for its WINDOW_UPDATE, then the trailers follow", async () => {
  const { transport, connection, stream, served } = await openStream([[SETTING.INITIAL_WINDOW_SIZE, 10]]);
  stream.write(new Uint8Array(20).fill(1));
  stream.end(0);
  await connection.drained();
  assert.equal(transport.dataOn(1), 10);
  assert.equal(
    transport.frames.filter((f) => f.type === FRAME.HEADERS).length,
    1,
    "headers, no trailers yet",
  );

  transport.feed(encodeWindowUpdate(1, 100));
  await waitFor(
    () => transport.frames.some((f) => f.type === FRAME.HEADERS && f.flags & FLAG.END_STREAM),
    "trailers",
  );
  assert.equal(transport.dataOn(1), 25, "the message and its 5-byte prefix");
  const sent = transport.frames.filter((f) => f.streamId === 1).map((f) => f.type);
  assert.deepEqual(sent, [FRAME.HEADERS, FRAME.DATA, FRAME.DATA, FRAME.HEADERS, FRAME.RST_STREAM]);
  transport.close();
  await served;
});

Deno.test("a response larger than the connection window waits for the connection's WINDOW_UPDATE", async () => {
  const { transport, connection, stream, served } = await openStream([[
    SETTING.INITIAL_WINDOW_SIZE,
    1 << 20,
  ]]);
  stream.write(new Uint8Array(70_000));
  await connection.drained();
  assert.equal(transport.dataOn(1), 65_535);
  assert.ok(
    transport.frames.every((f) => f.payload.length <= 16_384),
    "no frame past the peer's MAX_FRAME_SIZE",
  );

  transport.feed(encodeWindowUpdate(0, 10_000));
  await waitFor(() => transport.dataOn(1) === 70_005, "the rest of the message");
  transport.close();
  await served;
});

Deno.test("the server acknowledges SETTINGS and PING and grants received DATA back", async () => {
  const { transport, connection, stream, served } = await openStream([]);
  const messages: number[] = [];
  stream.onMessage = (m) => messages.push(m.length);
  const message = new Uint8Array(5 + 600_000);
  new DataView(message.buffer).setUint32(1, 600_000);
  const ping = new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]);
  for (let at = 0; at < message.length; at += 16_384) {
    transport.feed(encodeFrame(FRAME.DATA, 0, 1, message.subarray(at, at + 16_384)));
  }
  transport.feed(encodeFrame(FRAME.PING, 0, 0, ping));
  await waitFor(() => transport.frames.some((f) => f.type === FRAME.PING), "the PING's ACK");
  await connection.drained();
  assert.deepEqual(messages, [600_005 - 5]);
  const ack = transport.frames.find((f) => f.type === FRAME.PING)!;
  assert.deepEqual([ack.flags, [...ack.payload]], [FLAG.ACK, [...ping]]);
  assert.ok(transport.frames.some((f) => f.type === FRAME.SETTINGS && f.flags === FLAG.ACK));
  const granted = (id: number) =>
    transport.frames.filter((f) => f.type === FRAME.WINDOW_UPDATE && f.streamId === id)
      .reduce((sum, f) => sum + readUint31(f.payload, 0), 0);
  // The connection's first WINDOW_UPDATE widens its window; the rest grant what was read.
  assert.ok(granted(0) - ((1 << 20) - 65_535) >= 600_005 / 2, "connection window granted back");
  assert.ok(granted(1) >= 600_005 / 2, "stream window granted back");
  transport.close();
  await served;
});
