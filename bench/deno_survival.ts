/**
 * Which Deno versions survive proxies leaving: runs the reconnect repro of the load benchmark
 * (`xds_load.ts --proxies 10 --services 50 --rounds 1 --reconnect --no-baseline`) with the server and the load
 * process on each candidate Deno, and counts the runs in which the server died ("exited by itself"). A version
 * is rejected at its first death; a survivor gets every run. Prints a Markdown table; `--log DIR` keeps each
 * run's output.
 *
 *   deno run --allow-read --allow-write=/tmp --allow-env --allow-run bench/deno_survival.ts \
 *     --versions 2.9.3,2.9.4,2.9.5,2.9.6 [--runs 20] [--deno-root /opt/deno] [--log /tmp/deno_survival]
 *
 * A candidate's binary is `<deno-root>/<version>/node_modules/.bin/deno`; it is put first on PATH so the
 * benchmark's own `deno` children (server and load agent) run on it too.
 *
 * @module
 */
import { parseArgs } from "node:util";

const { values: flags } = parseArgs({
  args: Deno.args,
  options: {
    versions: { type: "string", default: "2.9.3,2.9.4,2.9.5,2.9.6" },
    runs: { type: "string", default: "20" },
    "deno-root": { type: "string", default: "/opt/deno" },
    log: { type: "string" },
  },
});

const REPRO = ["--proxies", "10", "--services", "50", "--rounds", "1", "--reconnect", "--no-baseline"];
const LOAD = new URL("./xds_load.ts", import.meta.url).pathname;
const DEATH = /server exited by itself \(code (\S+), signal (\S+)\)/;

/** The outcome of one run. */
interface RunOutcome {
  readonly died: boolean;
  /** `code 134, signal SIGABRT` when the server died. */
  readonly how: string;
  readonly ms: number;
}

async function runOnce(version: string, index: number): Promise<RunOutcome> {
  const bin = `${flags["deno-root"]}/${version}/node_modules/.bin`;
  const started = performance.now();
  const output = await new Deno.Command(`${bin}/deno`, {
    args: [
      "run",
      "--allow-net=127.0.0.1",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      // As the bench:load task grants: sh reads the server's threads' CPU.
      "--allow-run=deno,cat,sh",
      LOAD,
      ...REPRO,
    ],
    env: { PATH: `${bin}:${Deno.env.get("PATH") ?? ""}` },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
  if (flags.log) {
    await Deno.mkdir(flags.log, { recursive: true });
    await Deno.writeTextFile(`${flags.log}/${version}-${index}.log`, text);
  }
  const death = DEATH.exec(text);
  const failed = !output.success && !death;
  if (failed) throw new Error(`The load run on Deno ${version} failed without a server death:\n${text}`);
  return {
    died: death !== null,
    how: death ? `code ${death[1]}, signal ${death[2]}` : "",
    ms: performance.now() - started,
  };
}

const runs = Number(flags.runs);
if (!Number.isInteger(runs) || runs < 1) {
  throw new RangeError(`Invalid --runs "${flags.runs}": expected >= 1`);
}
const rows: string[] = [];
for (const version of flags.versions.split(",").map((v) => v.trim()).filter(Boolean)) {
  let done = 0;
  const deaths: string[] = [];
  for (; done < runs && deaths.length === 0; done++) {
    const outcome = await runOnce(version, done + 1);
    console.error(
      `Deno ${version} run ${done + 1}: ${outcome.died ? `server died (${outcome.how})` : "survived"} ` +
        `in ${(outcome.ms / 1000).toFixed(1)} s`,
    );
    if (outcome.died) deaths.push(`run ${done + 1}: ${outcome.how}`);
  }
  rows.push(
    `| ${version} | ${deaths.length} of ${done} | ${
      deaths.length > 0 ? `rejected (${deaths[0]})` : "survived"
    } |`,
  );
}
console.log("| Deno (server and load) | server died | verdict |\n|---|---|---|\n" + rows.join("\n"));
