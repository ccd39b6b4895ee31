/**
 * How many HTTP/2 connections the shared gRPC server accepts at once: N raw TCP clients connect together, send
 * the HTTP/2 preface and SETTINGS, and wait for the server's SETTINGS. Counts the served ones and the errors by
 * kind. It isolates the transport (listen backlog, accept pacing, per-connection setup) from xDS work.
 *
 *   deno run --allow-net=127.0.0.1 --allow-env bench/grpc_connect_storm.ts [N=5000]
 *
 * @module
 */
import { startGrpcServer } from "../shared/grpc/grpc_server.ts";
import { silentLogger } from "../shared/log/logger.ts";

const n = Number(Deno.args[0] ?? 5000);
if (!Number.isInteger(n) || n < 1) throw new RangeError(`Invalid N "${Deno.args[0]}": expected a count >= 1`);
const server = await startGrpcServer({
  name: "storm",
  listen: { tcp: "127.0.0.1:0", flag: "grpc_connect_storm" },
  services: [],
  logger: silentLogger,
});
const HELLO = Uint8Array.from([
  ...new TextEncoder().encode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
  ...[0, 0, 0, 0x4, 0, 0, 0, 0, 0], // empty SETTINGS
]);
const errors: Record<string, number> = {};
let served = 0;
const started = performance.now();
const connections = await Promise.all(Array.from({ length: n }, async () => {
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
    await conn.write(HELLO);
    if ((await conn.read(new Uint8Array(1024))) === null) throw new Error("closed before its SETTINGS");
    served++;
    return conn;
  } catch (error) {
    const kind = `${(error as Error).name}: ${(error as Error).message.slice(0, 60)}`;
    errors[kind] = (errors[kind] ?? 0) + 1;
  }
}));
const ms = Math.round(performance.now() - started);
console.log(JSON.stringify({ deno: Deno.version.deno, connections: n, served, errors, ms }));
for (const conn of connections) {
  try {
    conn?.close();
  } catch {
    // Closed by the server.
  }
}
await server.close(0);
