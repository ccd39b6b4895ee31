/**
 * What concurrent scrapes of the agent's `/stats/prometheus` cost it: a fake proxy admin serving `--mib` MiB of
 * stats (after 200 ms, as a large exposition takes Envoy), the agent's status server, and `--scrapers` curl
 * processes asking at once, `--rounds` times. Prints the agent process's RSS after each round and its peak
 * (sampled every 20 ms), and how often the admin was asked. The scrapers are other processes, so the RSS is
 * the status server's alone.
 *
 *   deno run --allow-net=127.0.0.1,0.0.0.0 --allow-read --allow-env --allow-sys --allow-run=sh \
 *     bench/status_scrape_flood.ts [--scrapers 64] [--mib 20] [--rounds 3]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { startStatusServer } from "../agent/proxy/status_server.ts";
import { Metrics } from "../shared/metrics/metrics.ts";
import { silentLogger } from "../shared/log/logger.ts";

const { values: flags } = parseArgs({
  args: Deno.args,
  options: {
    scrapers: { type: "string", default: "64" },
    mib: { type: "string", default: "20" },
    rounds: { type: "string", default: "3" },
  },
});
const scrapers = Number(flags.scrapers);
const mib = Number(flags.mib);
const rounds = Number(flags.rounds);

const line =
  'envoy_cluster_upstream_rq_total{cluster_name="outbound|80||svc-0000.ns.svc.cluster.local"} 12345\n';
const stats = line.repeat(Math.ceil(mib * 1024 * 1024 / line.length));
let adminAsked = 0;
const admin = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async () => {
  adminAsked++;
  await new Promise((resolve) => setTimeout(resolve, 200));
  return new Response(stats);
});
const status = await startStatusServer(0, {
  adminPort: admin.addr.port,
  quit() {},
  metrics: new Metrics("agent", { version: "bench", tag: "bench" }),
  log: silentLogger,
});
const rssMiB = () => Deno.memoryUsage().rss / 1048576;
let peak = rssMiB();
const sampler = setInterval(() => peak = Math.max(peak, rssMiB()), 20);
console.log(
  `idle ${
    rssMiB().toFixed(0)
  } MiB; ${scrapers} scrapers at once, ${mib} MiB of proxy stats, ${rounds} rounds`,
);
const started = performance.now();
try {
  for (let round = 1; round <= rounds; round++) {
    const url = `${status.url}/stats/prometheus`;
    const curl =
      `seq ${scrapers} | xargs -P ${scrapers} -I{} curl -s -o /dev/null -w '%{http_code} %{size_download}\\n' ${url}`;
    const output = await new Deno.Command("sh", { args: ["-c", curl] }).output();
    const answers = new TextDecoder().decode(output.stdout).trim().split("\n");
    const whole = answers.filter((a) =>
      a.startsWith("200 ") && Number(a.split(" ")[1]) >= stats.length
    ).length;
    console.log(
      `round ${round}: ${whole} of ${answers.length} scrapers got the whole exposition; ` +
        `RSS ${rssMiB().toFixed(0)} MiB, peak so far ${
          peak.toFixed(0)
        } MiB; the admin asked ${adminAsked} times`,
    );
  }
  console.log(`${((performance.now() - started) / 1000).toFixed(1)} s`);
} finally {
  clearInterval(sampler);
  await status.shutdown();
  await admin.shutdown();
}
