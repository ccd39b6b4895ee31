/**
 * Whether a `node:http2` server on a given Deno survives clients that leave, with and without the GOAWAY
 * bypass (`goaway_bypass.ts`, `--strip`): a server child on `--server-deno` answers each request
 * with `--answer-bytes`; this process (the pinned Deno) opens `--connections` connections one after another,
 * three requests on each, and closes each with `close()` (which sends GOAWAY). Prints whether the server lived,
 * how many sessions it closed, and its RSS before and after.
 *
 *   deno run --allow-net=127.0.0.1 --allow-read --allow-env --allow-run bench/goaway_survival.ts \
 *     --server-deno PATH [--strip] [--server-closes] [--connections 10000] [--answer-bytes 20000]
 *
 * With `--server-closes` the server ends each connection instead (`close()` after the third stream, which sends
 * the server's own GOAWAY) and the clients wait for it.
 *
 * With `--role server` it is the server child.
 *
 * @module
 */
import http2 from "node:http2";
import { parseArgs } from "node:util";
import { bypassGoaway } from "./goaway_bypass.ts";
import { CLIENT_PREFACE_BYTES } from "./goaway_frame_filter.ts";

const { values: flags } = parseArgs({
  args: Deno.args,
  options: {
    role: { type: "string", default: "driver" },
    "server-deno": { type: "string", default: "deno" },
    strip: { type: "boolean", default: false },
    "server-closes": { type: "boolean", default: false },
    connections: { type: "string", default: "10000" },
    "answer-bytes": { type: "string", default: "20000" },
  },
});

if (flags.role === "server") {
  const answer = "x".repeat(Number(flags["answer-bytes"]));
  const server = http2.createServer();
  let closed = 0;
  server.on("session", (session) => {
    if (flags.strip && !bypassGoaway(session, CLIENT_PREFACE_BYTES)) {
      throw new TypeError("no session handle to wrap");
    }
    session.on("error", () => {});
    session.on("close", () => closed++);
  });
  const served = new WeakMap<object, number>();
  server.on("stream", (stream) => {
    stream.on("error", () => {});
    stream.respond({ ":status": 200 });
    stream.end(answer);
    const session = stream.session;
    if (!flags["server-closes"] || session === undefined) return;
    const count = (served.get(session) ?? 0) + 1;
    served.set(session, count);
    // The server ends the connection: close() sends its own GOAWAY once the streams are done.
    if (count === 3) stream.once("close", () => session.close());
  });
  server.listen(0, "127.0.0.1", () => {
    console.log(
      JSON.stringify({ port: (server.address() as { port: number }).port, rss: Deno.memoryUsage().rss }),
    );
  });
  // Each line on stdin asks for the figures now.
  for await (const _ of Deno.stdin.readable) {
    console.log(JSON.stringify({ closed, rss: Deno.memoryUsage().rss }));
  }
  Deno.exit(0);
}

const args = [
  "run",
  "--allow-net=127.0.0.1",
  "--allow-env",
  new URL(import.meta.url).pathname,
  "--role",
  "server",
];
if (flags.strip) args.push("--strip");
if (flags["server-closes"]) args.push("--server-closes");
args.push("--answer-bytes", flags["answer-bytes"]!);
const child = new Deno.Command(flags["server-deno"]!, {
  args,
  stdin: "piped",
  stdout: "piped",
  stderr: "piped",
})
  .spawn();
const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
let buffered = "";
async function nextLine(): Promise<Record<string, number> | undefined> {
  while (!buffered.includes("\n")) {
    const { value, done } = await lines.read();
    if (done) return undefined;
    buffered += value;
  }
  const at = buffered.indexOf("\n");
  const line = buffered.slice(0, at);
  buffered = buffered.slice(at + 1);
  return JSON.parse(line);
}
const started = await nextLine();
if (started === undefined) throw new Error("The server child ended before listening");
const writer = child.stdin.getWriter();

/** One connection, three requests read to their end, then `close()`; resolves when it is gone or failed. */
function visit(port: number): Promise<void> {
  return new Promise((resolve) => {
    const client = http2.connect(`http://127.0.0.1:${port}`);
    client.on("error", () => resolve());
    client.on("close", () => resolve());
    let ended = 0;
    for (let i = 0; i < 3; i++) {
      const request = client.request({ ":path": "/" });
      request.on("data", () => {});
      request.on("error", () => {});
      request.on("end", () => {
        if (++ended === 3 && !flags["server-closes"]) client.close();
      });
    }
  });
}

const total = Number(flags.connections);
let visited = 0;
for (; visited < total; visited++) await visit(started.port);
await new Promise((resolve) => setTimeout(resolve, 2000));
await writer.write(new TextEncoder().encode("figures\n")).catch(() => {});
const after = await nextLine();
await writer.close().catch(() => {});
const status = await child.status;
const stderr = new TextDecoder().decode(await new Response(child.stderr).arrayBuffer());
const mib = (bytes: number) => Math.round(bytes / 1048576);
console.log(JSON.stringify({
  serverDeno: flags["server-deno"],
  strip: flags.strip,
  serverCloses: flags["server-closes"],
  connections: total,
  survived: after !== undefined,
  sessionsClosed: after?.closed,
  rssMiB: { before: mib(started.rss), after: after === undefined ? undefined : mib(after.rss) },
  exit: { code: status.code, signal: status.signal },
  ...(after === undefined && { serverError: stderr.trim().split("\n").slice(-2).join(" | ") }),
}));
