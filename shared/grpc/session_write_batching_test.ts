import assert from "node:assert/strict";
import * as http2 from "node:http2";
import type { AddressInfo, Socket } from "node:net";
import { Buffer } from "node:buffer";
import { batchHttp2ServerWrites } from "./session_write_batching.ts";

/** What reached a server socket's writer: the chunks of each write, in order. */
interface SocketWrites {
  readonly writes: number[];
}

/** Records how many chunks each of `socket`'s writes to the kernel carried. */
function recordWrites(socket: Socket): SocketWrites {
  const writes: number[] = [];
  const internal = socket as unknown as {
    _write: (chunk: unknown, encoding: string, callback: () => void) => void;
    _writev: (chunks: unknown[], callback: () => void) => void;
  };
  const write = internal._write.bind(socket);
  const writev = internal._writev.bind(socket);
  internal._write = (chunk, encoding, callback) => {
    writes.push(1);
    write(chunk, encoding, callback);
  };
  internal._writev = (chunks, callback) => {
    writes.push(chunks.length);
    writev(chunks, callback);
  };
  return { writes };
}

/**
 * Serves `body` once on a loopback HTTP/2 server (its writes batched when `batched`), fetches it, closes the
 * session from the server once the body is written, and returns what the client received and the writes.
 */
async function serveOnce(body: Uint8Array, batched: boolean) {
  const server = http2.createServer();
  if (batched) batchHttp2ServerWrites(server);
  let recorded: SocketWrites | undefined;
  server.on("connection", (socket: Socket) => recorded = recordWrites(socket));
  server.on("stream", (stream) => {
    stream.respond({ ":status": 200 });
    stream.end(body, () => stream.session?.close());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const client = http2.connect(`http://127.0.0.1:${port}`);
  try {
    const received = await new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const request = client.request({ ":path": "/" });
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => resolve(Buffer.concat(chunks)));
      request.on("error", reject);
      request.end();
    });
    return { received, writes: recorded!.writes };
  } finally {
    // The server has closed the session: the client's own close would wait for a GOAWAY exchange it missed.
    await new Promise<void>((resolve) => {
      client.once("close", () => resolve());
      client.destroy();
    });
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** A body of several HTTP/2 frames, no two bytes in a row alike. */
function frames(bytes: number): Uint8Array {
  const body = new Uint8Array(bytes);
  for (let i = 0; i < bytes; i++) body[i] = (i * 31 + (i >> 8)) & 0xff;
  return body;
}

Deno.test("a session's drain of several frames reaches its socket as one vectored write", async () => {
  const body = frames(200 * 1024);
  const batched = await serveOnce(body, true);
  assert.deepEqual(new Uint8Array(batched.received), body, "the client received the body byte for byte");
  assert.ok(
    batched.writes.some((chunks) => chunks > 1),
    `a write carried several frames (writes: ${batched.writes.join(",")})`,
  );
  const unbatched = await serveOnce(body, false);
  assert.deepEqual(new Uint8Array(unbatched.received), body);
  assert.ok(batched.writes.length < unbatched.writes.length, "fewer writes than one per frame");
});

Deno.test("a session closed right after its last frames still delivers them whole", async () => {
  for (const bytes of [1, 16 * 1024 + 1, 300 * 1024]) {
    const body = frames(bytes);
    const { received } = await serveOnce(body, true);
    assert.deepEqual(new Uint8Array(received), body, `${bytes} bytes`);
  }
});
