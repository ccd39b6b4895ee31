/**
 * Test helper, run as its own process: an echo server on a free loopback port that prints `{"port":N}` once
 * listening and serves until killed. Run under a low descriptor limit to see the server through EMFILE.
 *
 * @module
 */
import "reflect-metadata";
import { startEchoServer } from "./_test_echo_service.ts";

// Deno sets up its signal thread on first use, which panics when no descriptor is left: set it up now.
Deno.addSignalListener("SIGTERM", () => Deno.exit(0));
const { server } = await startEchoServer();
console.log(JSON.stringify({ port: server.port }));
