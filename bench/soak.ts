/**
 * The soak benchmark (#36): the real `mesh-discovery discovery` on loopback under a steady mix of config
 * pushes, endpoint churn, proxies coming and going and webhook calls (`soak/soak_load.ts`) for `--minutes`,
 * sampling every `--sample-s` its RSS (/proc), V8 heap (ControlZ `/memj/`) and open files (/proc/<pid>/fd).
 * Prints the samples as a Markdown table and the growth from the sample at five minutes (at a third of the
 * run when it is shorter than ten) to the last; the target is at most 5 %.
 *
 *   deno run --allow-net=127.0.0.1 --allow-read --allow-write --allow-env --allow-run=deno,cat,ls \
 *     --unsafely-ignore-certificate-errors=127.0.0.1 bench/soak.ts [--minutes 30] [--sample-s 10] \
 *     [--services 50] [--proxies 20] [--json FILE]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { join } from "node:path";
import { machineInfo, processMemory } from "./bench_processes.ts";
import { writeMesh } from "./mesh_fixture.ts";
import { startAbuseServer } from "./abuse/abuse_server.ts";
import { SoakLoad } from "./soak/soak_load.ts";

const { values: flags } = parseArgs({
  args: Deno.args,
  options: {
    minutes: { type: "string", default: "30" },
    "sample-s": { type: "string", default: "10" },
    services: { type: "string", default: "50" },
    proxies: { type: "string", default: "20" },
    json: { type: "string" },
  },
});
const minutes = Number(flags.minutes);
const sampleMs = Number(flags["sample-s"]) * 1000;
const services = Number(flags.services);
const TARGET_GROWTH = 0.05;
const log = (message: string) => console.error(`[soak ${new Date().toISOString().slice(11, 19)}] ${message}`);
const mib = (bytes: number) => Math.round(bytes / 1024 / 1024);

/** One sample of the server. */
interface Sample {
  readonly s: number;
  readonly rssMiB: number;
  readonly heapUsedMiB: number;
  readonly heapTotalMiB: number;
  readonly externalMiB: number;
  readonly fds: number;
  readonly proxiesWithConfig: number;
  readonly pushes: number;
  readonly webhookOk: number;
}

/** Open file descriptors of `pid`, counted through `ls` (Deno reads nothing under /proc short of --allow-all). */
function openFiles(pid: number): number {
  const out = new Deno.Command("ls", { args: [`/proc/${pid}/fd`], stdout: "piped", stderr: "null" })
    .outputSync();
  return new TextDecoder().decode(out.stdout).split("\n").filter((l) => l !== "").length;
}

async function heap(ctrlzPort: string): Promise<Record<string, number>> {
  try {
    const response = await fetch(`http://127.0.0.1:${ctrlzPort}/memj/?native=false`, {
      signal: AbortSignal.timeout(5_000),
    });
    return await response.json();
  } catch {
    return {};
  }
}

const dir = await Deno.makeTempDir({ prefix: "mesh_soak_" });
const configDir = join(dir, "config");
const scratchDir = join(dir, "scratch");
await Deno.mkdir(configDir);
await Deno.mkdir(scratchDir);
await writeMesh(configDir, services);
const server = await startAbuseServer({ configDir });
const machine = machineInfo();
log(`machine: ${JSON.stringify(machine)}; server pid ${server.pid}; ${minutes} min`);
const load = new SoakLoad(server.addresses, configDir, scratchDir, {
  services,
  pushEveryMs: 5_000,
  churnEveryMs: 2_000,
  churnHeld: 20,
  proxies: Number(flags.proxies),
  proxyEveryMs: 3_000,
  webhookEveryMs: 1_000,
});
const samples: Sample[] = [];
const started = performance.now();
const endAt = started + minutes * 60_000;
let diedDuringRun = false;
try {
  for (;;) {
    const usage = await heap(server.addresses.ctrlzPort);
    const sample: Sample = {
      s: Math.round((performance.now() - started) / 1000),
      rssMiB: Math.round(processMemory(server.pid).rssKiB / 1024),
      heapUsedMiB: mib(usage.heapUsed ?? NaN),
      heapTotalMiB: mib(usage.heapTotal ?? NaN),
      externalMiB: mib(usage.external ?? NaN),
      fds: openFiles(server.pid),
      proxiesWithConfig: load.proxiesWithConfig,
      pushes: load.counts.pushes,
      webhookOk: load.counts.webhookOk,
    };
    samples.push(sample);
    log(JSON.stringify(sample));
    if (server.hasExited() || performance.now() + sampleMs > endAt) break;
    await Promise.race([new Promise((resolve) => setTimeout(resolve, sampleMs)), server.exited]);
  }
} finally {
  diedDuringRun = server.hasExited();
  await load.stop();
  await server.program.stop();
  await Deno.remove(dir, { recursive: true });
}

const runS = samples.at(-1)!.s;
const fromS = runS >= 600 ? 300 : Math.round(runS / 3);
const base = samples.find((x) => x.s >= fromS) ?? samples[0];
const last = samples.at(-1)!;
const growth = (key: "rssMiB" | "heapUsedMiB" | "fds") => (last[key] - base[key]) / base[key];
const pct = (v: number) => `${(v * 100).toFixed(1)} %`;

console.log(
  `Machine: ${machine.cpus} × ${machine.cpuModel}, ${machine.memory}, Deno ${machine.deno}; ` +
    `load average at the end ${machineInfo().loadAverage}; ${minutes} min, ${services} services, ` +
    `${flags.proxies} proxies.\n`,
);
console.log(
  "| s | RSS (MiB) | heap used / total (MiB) | external (MiB) | open files | proxies with config |",
);
console.log("| ---: | ---: | ---: | ---: | ---: | ---: |");
for (const x of samples) {
  console.log(
    `| ${x.s} | ${x.rssMiB} | ${x.heapUsedMiB} / ${x.heapTotalMiB} | ${x.externalMiB} | ${x.fds} | ` +
      `${x.proxiesWithConfig} |`,
  );
}
const verdict = growth("rssMiB") <= TARGET_GROWTH ? "met" : "missed";
console.log(
  `\nServer ${diedDuringRun ? "DIED during the run" : "alive at the end"}. Load: ${
    JSON.stringify(load.counts)
  }.\n` +
    `Growth from ${base.s} s to ${last.s} s: RSS ${pct(growth("rssMiB"))} (target ≤ 5 %: ${verdict}), ` +
    `heap used ${pct(growth("heapUsedMiB"))}, open files ${pct(growth("fds"))}.`,
);
if (flags.json) {
  await Deno.writeTextFile(flags.json, JSON.stringify({ machine, samples, counts: load.counts }, null, 2));
}
