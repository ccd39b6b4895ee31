// Test fixture: serves "ok" through the connection guard on a free loopback port, prints the port, writes
// warnings to stderr, and stops when stdin closes.
import { type Logger, silentLogger } from "../../log/logger.ts";
import { serveHttp } from "../serve.ts";

const stderr: Logger = {
  ...silentLogger,
  scope: "fixture",
  warn: (msg) => Deno.stderr.writeSync(new TextEncoder().encode(`${msg}\n`)),
};
const server = await serveHttp(
  "fixture",
  { hostname: "127.0.0.1", port: 0 },
  () => new Response("ok"),
  stderr,
);
Deno.stdout.writeSync(new TextEncoder().encode(`${server.address.port}\n`));
for await (const _ of Deno.stdin.readable) {
  // runs until stdin closes
}
await server.shutdown();
