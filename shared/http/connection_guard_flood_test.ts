import assert from "node:assert/strict";
import net from "node:net";
import { silentLogger } from "../log/logger.ts";
import { type ConnectionLimits, type ConnectionRefusal, startConnectionGuard } from "./connection_guard.ts";
import { waitFor } from "../testing/wait_for.ts";
import { withTempDir } from "../testing/openssl.ts";

const LIMITS: ConnectionLimits = {
  handshakeTimeoutMs: 10_000,
  headerTimeoutMs: 10_000,
  idleTimeoutMs: 10_000,
  answerTimeoutMs: 10_000,
  maxHeaderBytes: 4096,
  maxConnections: 8,
  maxConnectionsPerPeer: 8,
};

/**
 * A guard in front of a backend that answers `/ready` at once and holds `/hold` until `release()`. The
 * guard's backend connection for the `gated`-th request (1-based) waits until `openGate()`, so a test can act
 * while that request sits between the guard and the backend.
 */
async function withGuard(
  limits: ConnectionLimits,
  gated: number,
  body: (guard: {
    port: number;
    dialing: () => boolean;
    openGate: () => void;
    refusals: ConnectionRefusal[];
    holding: () => number;
    release: () => void;
    waiting: () => number;
  }) => Promise<void>,
): Promise<void> {
  const ending = new AbortController();
  const released = Promise.withResolvers<void>();
  let holding = 0;
  const backend = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ending.signal, onListen: () => {} },
    async (r) => {
      if (new URL(r.url).pathname === "/hold") {
        holding++;
        await Promise.race([
          released.promise,
          new Promise((resolve) => ending.signal.addEventListener("abort", resolve)),
        ]);
      }
      return new Response("ready");
    },
  );
  const gate = Promise.withResolvers<void>();
  let dials = 0;
  const refusals: ConnectionRefusal[] = [];
  const guard = startConnectionGuard({
    listen: { hostname: "127.0.0.1", port: 0 },
    backend: backend.addr,
    limits,
    log: silentLogger,
    name: "guarded",
    onRefused: (reason) => refusals.push(reason),
    dial: async (address) => {
      if (++dials === gated) await gate.promise;
      return Deno.connect(address);
    },
  });
  try {
    await body({
      port: guard.address.port,
      dialing: () => dials >= gated,
      openGate: () => gate.resolve(),
      refusals,
      holding: () => holding,
      release: () => released.resolve(),
      waiting: () => guard.waiting,
    });
  } finally {
    gate.resolve();
    await guard.close();
    ending.abort();
    await backend.finished;
  }
}

/**
 * Sends one request from `localAddress` and reads until the server closes: the answer, or "" when the
 * connection was closed or reset without one.
 */
function request(port: number, localAddress: string, path: string): { answer: Promise<string>; end(): void } {
  const socket = net.connect({ host: "127.0.0.1", port, localAddress });
  let text = "";
  socket.on("data", (chunk: Uint8Array) => text += new TextDecoder().decode(chunk));
  socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
  const answer = new Promise<string>((resolve) => {
    socket.on("close", () => resolve(text));
    socket.on("error", () => {});
  });
  return { answer, end: () => socket.destroy() };
}

/** Waits until the guard has refused or queued the newest connection, `whose` named in a timeout. */
function placed(
  guard: { readonly refusals: readonly unknown[]; waiting(): number },
  whose: string,
): Promise<void> {
  return waitFor(
    () => guard.refusals.length > 0 || guard.waiting() > 0,
    `the guard to place the ${whose}'s connection`,
  );
}

Deno.test("A probe whose request has arrived is not closed to make room for a flood from its own address", async () => {
  await withGuard({ ...LIMITS, maxConnectionsPerPeer: 1 }, 1, async (guard) => {
    const probe = request(guard.port, "127.0.0.1", "/ready");
    await waitFor(guard.dialing, "the probe's request to reach the guard");
    // The flood's next connection finds its address's one slot taken by the probe.
    const flood = request(guard.port, "127.0.0.1", "/ready");
    await placed(guard, "flood");
    guard.openGate();
    assert.match(await probe.answer, /^HTTP\/1.1 200/);
    assert.match(await flood.answer, /^HTTP\/1.1 200/, "the newcomer waited for the probe's slot");
    assert.deepEqual(guard.refusals, []);
  });
});

Deno.test("A probe from an address whose connections all have a request in progress waits for one to end", async () => {
  await withGuard({ ...LIMITS, maxConnectionsPerPeer: 1 }, 0, async (guard) => {
    const busy = request(guard.port, "127.0.0.1", "/hold");
    await waitFor(() => guard.holding() === 1, "a request in progress");
    const probe = request(guard.port, "127.0.0.1", "/ready");
    await placed(guard, "probe");
    guard.release();
    assert.match(await busy.answer, /^HTTP\/1.1 200/);
    assert.match(await probe.answer, /^HTTP\/1.1 200/);
    assert.deepEqual(guard.refusals, []);
  });
});

Deno.test("A probe from another address is not closed to make room when a flood fills the listener", async () => {
  const limits = { ...LIMITS, maxConnections: 3, maxConnectionsPerPeer: 3 };
  await withGuard(limits, 3, async (guard) => {
    // The flooding address holds two requests in progress; the probe takes the listener's last slot.
    const held = [request(guard.port, "127.0.0.1", "/hold"), request(guard.port, "127.0.0.1", "/hold")];
    await waitFor(() => guard.holding() === 2, "two requests in progress");
    const probe = request(guard.port, "127.0.0.2", "/ready");
    await waitFor(guard.dialing, "the probe's request to reach the guard");
    const flood = request(guard.port, "127.0.0.1", "/ready");
    await placed(guard, "flood");
    guard.openGate();
    assert.match(await probe.answer, /^HTTP\/1.1 200/);
    assert.match(await flood.answer, /^HTTP\/1.1 200/, "the newcomer waited for the probe's slot");
    assert.deepEqual(guard.refusals, []);
    for (const h of held) h.end();
  });
});

/**
 * A child process that connects a probe (a whole `GET /ready`) then `flood` connections from the same address
 * that send half a header block, writes `ready` into `marker` once all are connected, prints the probe's
 * status line (empty when it was closed without an answer), and holds the flood open until its stdin closes.
 * Held, the flood must be made room for: had the child closed it once the probe was answered, a guard slow
 * to reach the flood's queued connections would find them already gone.
 */
function burst(port: number, flood: number, marker: string): Deno.ChildProcess {
  const code = `
    const connect = () => Deno.connect({ hostname: "127.0.0.1", port: ${port} });
    const text = (s) => new TextEncoder().encode(s);
    const probe = await connect();
    await probe.write(text("GET /ready HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n"));
    const held = [];
    for (let i = 0; i < ${flood}; i++) {
      const conn = await connect();
      await conn.write(text("GET /ready HTTP/1.1\\r\\nHost: x\\r\\n"));
      held.push(conn);
    }
    Deno.writeTextFileSync(${JSON.stringify(marker)}, "ready");
    let answer = "";
    const chunk = new Uint8Array(4096);
    for (let n; (n = await probe.read(chunk).catch(() => null)) !== null;) {
      answer += new TextDecoder().decode(chunk.subarray(0, n));
    }
    console.log(JSON.stringify(answer.split("\\r\\n")[0]));
    for await (const _ of Deno.stdin.readable);
    for (const conn of held) conn.close();
  `;
  const command = new Deno.Command("deno", {
    args: ["eval", code],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  });
  return command.spawn();
}

/** The first line `stream` carries; the rest is discarded. */
async function firstLine(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  await reader.cancel();
  return text.split("\n")[0];
}

/** Blocks this process's event loop (so its listeners accept nothing) until `marker` exists. */
function blockUntilExists(marker: string): void {
  const bound = Date.now() + 60_000;
  while (Date.now() < bound) {
    try {
      Deno.statSync(marker);
      return;
    } catch {
      // not yet
    }
  }
  throw new Error(`The child process did not write "${marker}" within 60 s`);
}

Deno.test("A probe queued among a burst of connections from its own address is read before any is closed", async () => {
  await withTempDir(async (dir) => {
    await withGuard({ ...LIMITS, maxConnectionsPerPeer: 2 }, 0, async (guard) => {
      const marker = `${dir}/connected`;
      const child = burst(guard.port, 20, marker);
      // The whole burst waits in the accept queue, the probe first, as when a flood outpaces the server.
      blockUntilExists(marker);
      const statusLine = await firstLine(child.stdout);
      try {
        assert.match(statusLine, /HTTP\/1.1 200/);
        await waitFor(
          () => guard.refusals.includes("evicted"),
          "the flood's connections to make room for each other",
        );
      } finally {
        await child.stdin.close();
        await child.status;
      }
    });
  });
});
