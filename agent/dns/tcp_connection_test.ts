import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import FakeTimers from "@sinonjs/fake-timers";
import { timersOf } from "@mesh/shared/testing/fake_timers";
import { type DnsAnswer, type DnsTcpSocket, serveDnsTcpConnection } from "./tcp_connection.ts";
import { tcpFrame, TcpFrameReader } from "./tcp_frames.ts";

const IDLE_MS = 8_000;

/**
 * A client's connection as the proxy sees it, without a network: bytes the client sends arrive as `data` at once,
 * and what the proxy writes waits in `unread` until the client reads, past `highWaterMark` bytes needing a drain.
 */
class FakeClientSocket extends EventEmitter implements DnsTcpSocket {
  destroyed = false;
  paused = false;
  unread = 0;
  readonly replies = new TcpFrameReader();
  received: Uint8Array[] = [];

  constructor(readonly highWaterMark = 16_384) {
    super();
  }

  get writableNeedDrain(): boolean {
    return this.unread >= this.highWaterMark;
  }

  /** The client sends bytes; they arrive unless the proxy paused reading or closed. */
  send(bytes: Uint8Array): void {
    assert.ok(!this.paused && !this.destroyed, "the proxy is not reading");
    this.emit("data", bytes);
  }

  /** The client reads everything written so far. */
  readAll(): void {
    this.unread = 0;
    this.emit("drain");
  }

  write(bytes: Uint8Array): boolean {
    this.unread += bytes.length;
    this.received.push(...this.replies.push(bytes));
    return !this.writableNeedDrain;
  }

  pause(): this {
    this.paused = true;
    return this;
  }

  resume(): this {
    this.paused = false;
    return this;
  }

  destroy(): this {
    if (!this.destroyed) {
      this.destroyed = true;
      this.emit("close");
    }
    return this;
  }
}

/** An answer that echoes each query padded to `replyBytes`, as a table answer with many records would be. */
function echo(replyBytes: number): DnsAnswer {
  return (query) => Uint8Array.from({ length: replyBytes }, (_, i) => query[i] ?? 0);
}

function connection(answer: DnsAnswer, highWaterMark?: number) {
  const clock = FakeTimers.createClock();
  const socket = new FakeClientSocket(highWaterMark);
  serveDnsTcpConnection(socket, answer, IDLE_MS, timersOf(clock));
  return { clock, socket };
}

Deno.test("each query in the stream is answered in turn, however the stream was cut", () => {
  const { socket } = connection(echo(12));
  const stream = Uint8Array.of(...tcpFrame(Uint8Array.of(1, 1)), ...tcpFrame(Uint8Array.of(2, 2)));
  for (const byte of stream) socket.send(Uint8Array.of(byte));
  assert.deepEqual(socket.received.map((r) => r[0]), [1, 2]);
});

Deno.test("a client that sends queries and never reads has no more answered than its socket buffers", () => {
  // Before, every query of every chunk was answered and its reply queued: a client writing 1,000 queries a
  // second for a 1 KiB answer and reading none grew the agent by 1 MiB a second, without end.
  const { socket } = connection(echo(1_000), 16_384);
  const queries = Array.from({ length: 1_000 }, (_, i) => tcpFrame(Uint8Array.of(i >> 8, i & 0xff)));
  socket.send(Uint8Array.from(queries.flatMap((q) => [...q])));
  assert.ok(socket.paused, "the proxy stopped reading");
  assert.equal(socket.received.length, 17, "replies up to the high-water mark, and the one past it");
  socket.readAll();
  assert.equal(socket.received.length, 34, "the client read: the next ones are answered");
  while (socket.paused) socket.readAll();
  assert.deepEqual(socket.received.map((r) => (r[0] << 8) | r[1]), queries.map((_, i) => i));
});

Deno.test("a connection whose query does not come whole within the idle time is closed, however it trickles", () => {
  // Before, every byte restarted the idle timer: a byte every 7 s held a connection, and 256 such clients
  // every TCP connection the proxy takes, for good.
  const { clock, socket } = connection(echo(12));
  socket.send(Uint8Array.of(0xff, 0xff));
  for (let i = 0; i < 7; i++) {
    clock.tick(IDLE_MS / 8);
    socket.send(Uint8Array.of(0));
  }
  assert.equal(socket.destroyed, false);
  clock.tick(IDLE_MS / 8);
  assert.equal(socket.destroyed, true);
});

Deno.test("each reply starts the idle time again, and a reply still owed holds the connection open", async () => {
  const { clock, socket } = connection(echo(12));
  clock.tick(IDLE_MS - 1);
  socket.send(tcpFrame(Uint8Array.of(1)));
  clock.tick(IDLE_MS - 1);
  assert.equal(socket.destroyed, false, "the reply started it again");
  clock.tick(1);
  assert.equal(socket.destroyed, true);

  const upstream = Promise.withResolvers<Uint8Array | undefined>();
  const slow = connection(() => upstream.promise);
  slow.socket.send(tcpFrame(Uint8Array.of(2)));
  slow.clock.tick(IDLE_MS * 2);
  assert.equal(slow.socket.destroyed, false, "the proxy owes a reply");
  upstream.resolve(Uint8Array.of(9));
  await upstream.promise;
  assert.deepEqual(slow.socket.received, [Uint8Array.of(9)]);
  slow.clock.tick(IDLE_MS);
  assert.equal(slow.socket.destroyed, true);
});

Deno.test("a client that never reads is closed once the idle time passed with no reply owed", () => {
  const { clock, socket } = connection(echo(1_000), 1_000);
  socket.send(Uint8Array.of(...tcpFrame(Uint8Array.of(1)), ...tcpFrame(Uint8Array.of(2))));
  assert.ok(socket.paused);
  clock.tick(IDLE_MS);
  assert.equal(socket.destroyed, true);
});
