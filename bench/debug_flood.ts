/**
 * What concurrent requests for a large debug answer cost the server: the real `mesh-discovery` (the abuse
 * benchmark's, Mock registry) over a mesh of `--services` services, and `--clients` curl processes asking
 * `--path` at once, three rounds, while `/ready` is probed every 100 ms. Prints the answers by status, the
 * server's RSS (idle, after, peak) and the slowest `/ready`.
 *
 *   deno run --allow-net=127.0.0.1 --allow-read --allow-write --allow-env --allow-run=deno,cat,sh \
 *     bench/debug_flood.ts [--services 3000] [--clients 64] [--path /debug/endpointShardz]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { writeMesh } from "./mesh_fixture.ts";
import { startAbuseServer } from "./abuse/abuse_server.ts";
import { processMemory } from "./bench_processes.ts";

const { values: flags } = parseArgs({
  args: Deno.args,
  options: {
    services: { type: "string", default: "3000" },
    clients: { type: "string", default: "64" },
    path: { type: "string", default: "/debug/endpointShardz" },
  },
});
const clients = Number(flags.clients);
const dir = await Deno.makeTempDir({ prefix: "debug_flood_" });
await Deno.mkdir(`${dir}/config`);
await writeMesh(`${dir}/config`, Number(flags.services));
const server = await startAbuseServer({ configDir: `${dir}/config`, env: {} });
const rssMiB = () => processMemory(server.pid).rssKiB / 1024;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
try {
  const base = `http://${server.addresses.httpAddr}`;
  for (let i = 0; i < 100; i++) {
    const ready = await fetch(`${base}/ready`).then((r) => (r.body?.cancel(), r.status === 200), () => false);
    if (ready) break;
    await sleep(200);
  }
  await sleep(3000);
  const idle = rssMiB();
  let peak = idle;
  let readyMax = 0;
  const sampler = setInterval(() => peak = Math.max(peak, rssMiB()), 20);
  const prober = setInterval(async () => {
    const started = performance.now();
    await fetch(`${base}/ready`).then((r) => r.body?.cancel(), () => {});
    readyMax = Math.max(readyMax, performance.now() - started);
  }, 100);
  try {
    for (let round = 1; round <= 3; round++) {
      const started = performance.now();
      const curl =
        `seq ${clients} | xargs -P ${clients} -I{} curl -s -o /dev/null -w '%{http_code}\\n' ${base}${flags.path}`;
      const output = await new Deno.Command("sh", { args: ["-c", curl] }).output();
      const codes: Record<string, number> = {};
      for (const code of new TextDecoder().decode(output.stdout).trim().split("\n")) {
        codes[code] = (codes[code] ?? 0) + 1;
      }
      console.log(
        `${flags.path} round ${round}: ${JSON.stringify(codes)} in ${
          (performance.now() - started).toFixed(0)
        } ms; ` +
          `server RSS idle ${idle.toFixed(0)}, now ${rssMiB().toFixed(0)}, peak ${peak.toFixed(0)} MiB; ` +
          `/ready slowest ${readyMax.toFixed(0)} ms`,
      );
    }
  } finally {
    clearInterval(sampler);
    clearInterval(prober);
  }
} finally {
  server.program.child.kill("SIGTERM");
  await server.exited;
  await Deno.remove(dir, { recursive: true });
}
