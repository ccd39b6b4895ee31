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
 * With `--check agent` each run is instead `tests/agent_proxy_e2e_test.ts`, every process of it on the
 * candidate: the agent, a gRPC client of the discovery server, lives through a restart of that server. On
 * 2.9.6 the agent died there once in 11–18 runs (docs/deno_pin.md), so give it 30 runs. A run that fails or
 * outlasts two minutes counts as a death, with the test's last lines as its cause.
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
    check: { type: "string", default: "load" },
  },
});
if (flags.check !== "load" && flags.check !== "agent") {
  throw new RangeError(`Invalid --check "${flags.check}": expected load or agent`);
}

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

const AGENT_TEST = new URL("../tests/agent_proxy_e2e_test.ts", import.meta.url).pathname;
/** The test task's permissions, read from deno.json so they cannot drift from it. */
const TEST_PERMISSIONS = (JSON.parse(await Deno.readTextFile(new URL("../deno.json", import.meta.url))).tasks
  .test.command as string).split(" ").filter((word) => word.startsWith("--allow-"));
const AGENT_RUN_LIMIT_MS = 120_000;

/** One run of the agent's end-to-end test on `bin`'s Deno; a failure or a hang is a death. */
async function runAgentTest(bin: string, version: string, index: number): Promise<RunOutcome> {
  const started = performance.now();
  const child = new Deno.Command(`${bin}/deno`, {
    args: ["test", ...TEST_PERMISSIONS, AGENT_TEST],
    cwd: new URL("..", import.meta.url).pathname,
    env: { PATH: `${bin}:${Deno.env.get("PATH") ?? ""}`, TMPDIR: "/tmp", NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), AGENT_RUN_LIMIT_MS);
  const output = await child.output();
  clearTimeout(timer);
  const text = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
  if (flags.log) {
    await Deno.mkdir(flags.log, { recursive: true });
    await Deno.writeTextFile(`${flags.log}/${version}-agent-${index}.log`, text);
  }
  const failedStep = /^\s*(.*) \.\.\. FAILED/m.exec(text)?.[1];
  return {
    died: !output.success,
    how: output.success
      ? ""
      : output.signal === "SIGKILL"
      ? `hung past ${AGENT_RUN_LIMIT_MS / 1000} s`
      : `failed: ${failedStep ?? `exit code ${output.code}`}`,
    ms: performance.now() - started,
  };
}

async function runOnce(version: string, index: number): Promise<RunOutcome> {
  const bin = `${flags["deno-root"]}/${version}/node_modules/.bin`;
  if (flags.check === "agent") return await runAgentTest(bin, version, index);
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
      `Deno ${version} run ${done + 1}: ${outcome.died ? `died (${outcome.how})` : "survived"} ` +
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
const heading = flags.check === "agent"
  ? "| Deno (agent end-to-end test) | failed | verdict |"
  : "| Deno (server and load) | server died | verdict |";
console.log(`${heading}\n|---|---|---|\n` + rows.join("\n"));
