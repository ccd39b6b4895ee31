/**
 * The abuse benchmark (#35): each attack of `abuse/attack_catalog.ts` against a fresh real `mesh-discovery
 * discovery` on loopback, with a healthy proxy receiving pushes and a kubelet-like `/ready` prober beside the
 * attackers. Prints a Markdown table: RSS idle / peak / after the attackers left, `/ready` latency and
 * failures, pushes received against pushes made, whether the server survived, and the targets it missed.
 *
 *   deno run --allow-net=127.0.0.1 --allow-read --allow-write --allow-env --allow-run=deno,cat,sh \
 *     bench/abuse.ts [--attack NAME]... [--small] [--size key=value]... [--after-s 60] [--idle-s 5] \
 *     [--rounds 1] [--rss-limit-mb 3072] [--push-every-ms 3000] [--json FILE] [--server-env NAME=value]... \
 *     [--profile-s N [--profile-dir DIR]] [--diagnose-dir DIR] [--server-log-dir DIR]
 *
 * `--attack` takes an attack's name or its family (`webhook-bodies` selects it and `webhook-bodies:h1`);
 * default all. `--small` runs each at a size that finishes in about a minute; `--size` overrides one size of
 * every selected attack that has it. `--rounds N` attacks the same server N times, each followed by the wait
 * after it, and lists RSS after each round: what a flood leaves once is told from what every flood adds. Past
 * `--rss-limit-mb` the harness kills the server and says so.
 * `--profile-s` starts the server with `--profile` and saves CPU profiles of the first N seconds of each attack
 * (`DIR/<attack>-<n>.cpuprofile`, read them with `cpuprofile_top.ts`). Each row's note splits idle and after
 * memory into glibc's main arena (`[heap]`), other anonymous memory and V8's figures. `--diagnose-dir` saves
 * smaps, `/debug/cachez` and `/memj/` at idle and after, then a heap snapshot and the server's log
 * (`abuse/memory_snapshot.ts`). `--server-log-dir` keeps each server's whole log as `DIR/<attack>-server.log`.
 * Each failed `/ready` probe is listed under the table with its error and its time from the attack's start.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { machineInfo } from "./bench_processes.ts";
import { selectAttacks } from "./abuse/attack_catalog.ts";
import { renderAbuseReport } from "./abuse/abuse_report.ts";
import { type AttackResult, runAttack } from "./abuse/run_attack.ts";

const { values: flags } = parseArgs({
  args: Deno.args,
  options: {
    attack: { type: "string", multiple: true, default: [] },
    small: { type: "boolean", default: false },
    size: { type: "string", multiple: true, default: [] },
    "after-s": { type: "string" },
    "idle-s": { type: "string", default: "5" },
    rounds: { type: "string", default: "1" },
    "rss-limit-mb": { type: "string", default: "3072" },
    "push-every-ms": { type: "string", default: "3000" },
    json: { type: "string" },
    "server-env": { type: "string", multiple: true, default: [] },
    "profile-s": { type: "string", default: "0" },
    "profile-dir": { type: "string", default: "." },
    "diagnose-dir": { type: "string" },
    "server-log-dir": { type: "string" },
  },
});

const overrides: Record<string, number> = {};
for (const pair of flags.size) {
  const [key, value] = pair.split("=", 2);
  if (value === undefined || !Number.isFinite(Number(value))) {
    throw new RangeError(`Invalid --size "${pair}": expected key=number, e.g. connections=100`);
  }
  overrides[key] = Number(value);
}
const serverEnv: Record<string, string> = {};
for (const pair of flags["server-env"]) {
  const at = pair.indexOf("=");
  if (at <= 0) {
    throw new RangeError(`Invalid --server-env "${pair}": expected NAME=value, e.g. MALLOC_ARENA_MAX=2`);
  }
  serverEnv[pair.slice(0, at)] = pair.slice(at + 1);
}
const log = (message: string) =>
  console.error(`[abuse ${new Date().toISOString().slice(11, 19)}] ${message}`);
const options = {
  afterS: Number(flags["after-s"] ?? (flags.small ? 30 : 60)),
  idleS: Number(flags["idle-s"]),
  rounds: Number(flags.rounds),
  rssLimitMiB: Number(flags["rss-limit-mb"]),
  pushEveryMs: Number(flags["push-every-ms"]),
  serverEnv,
  profileS: Number(flags["profile-s"]),
  profileDir: flags["profile-dir"],
  diagnoseDir: flags["diagnose-dir"],
  serverLogDir: flags["server-log-dir"],
  log,
};

const machine = machineInfo();
log(`machine: ${JSON.stringify(machine)}`);
const results: AttackResult[] = [];
for (const attack of selectAttacks(flags.attack)) {
  const base = flags.small ? attack.small : attack.full;
  const sizes = { ...base };
  for (const [key, value] of Object.entries(overrides)) if (key in base) sizes[key] = value;
  try {
    results.push(await runAttack(attack, sizes, options));
  } catch (error) {
    log(`${attack.name}: the run failed: ${error instanceof Error ? error.stack : error}`);
  }
  log(`${attack.name}: done`);
}
console.log(
  `Machine: ${machine.cpus} × ${machine.cpuModel}, ${machine.memory}, Deno ${machine.deno}; ` +
    `load average at the end ${machineInfo().loadAverage}; ${flags.small ? "--small" : "full"} sizes.\n`,
);
console.log(renderAbuseReport(results));
if (flags.json) await Deno.writeTextFile(flags.json, JSON.stringify({ machine, results }, null, 2));
