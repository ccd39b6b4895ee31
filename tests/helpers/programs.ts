/**
 * Starts the real programs as subprocesses, with exactly the permissions their `deno task` entries grant, so the
 * tests also prove the permission lists are sufficient.
 */

import { poll } from "./poll.ts";

const ROOT = new URL("../../", import.meta.url);
const decoder = new TextDecoder();

/** The program entry points. */
export type ProgramName = "mesh-discovery" | "mesh-agent";

/** `deno run` arguments (permissions and script) of a program, read from its task in deno.json. */
export function programArgs(program: ProgramName): string[] {
  const config = JSON.parse(Deno.readTextFileSync(new URL("deno.json", ROOT)));
  const task = config.tasks[program];
  const command: string = typeof task === "string" ? task : task.command;
  const words = command.split(/\s+/);
  if (words[0] !== "deno" || words[1] !== "run") {
    throw new Error(`Task ${program} does not start with "deno run"`);
  }
  return words.slice(1);
}

/** {@link programArgs} for a program started in another working directory than the repository's. */
export function programArgsAnywhere(program: ProgramName): string[] {
  const root = ROOT.pathname;
  return programArgs(program).flatMap((a) =>
    /^[a-z]+\/main\.ts$/.test(a) ? ["--config", `${root}deno.json`, `${root}${a}`] : [a]
  );
}

/** Output of a finished program run. */
export interface ProgramResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a program to completion with `args` and an environment (inheriting nothing but PATH and HOME). */
export async function runProgram(
  program: ProgramName,
  args: string[],
  env: Record<string, string> = {},
): Promise<ProgramResult> {
  const output = await new Deno.Command("deno", {
    args: [...programArgs(program), ...args],
    cwd: ROOT,
    env: baseEnv(env),
    clearEnv: true,
    stdin: "null",
  }).output();
  return { code: output.code, stdout: decoder.decode(output.stdout), stderr: decoder.decode(output.stderr) };
}

/** A program running in the background, with its output collected as it arrives. */
export class RunningProgram {
  #stdout = "";
  #stderr = "";
  readonly #done: Promise<Deno.CommandStatus>;
  readonly #readers: Promise<void>[];
  #exit: Deno.CommandStatus | undefined;

  constructor(readonly child: Deno.ChildProcess) {
    this.#readers = [
      collect(child.stdout, (t) => this.#stdout += t),
      collect(child.stderr, (t) => this.#stderr += t),
    ];
    this.#done = child.status;
    this.#done.then((status) => this.#exit = status);
  }

  /**
   * Throws when the program has exited, naming how and the end of its error output: a wait that polls
   * something else (a port, a metric) then says the program died instead of only that it timed out.
   *
   * @throws {Error} `<name> exited (code C, signal S) …`
   */
  assertRunning(name: string): void {
    const exit = this.#exit;
    if (exit === undefined) return;
    throw new Error(
      `${name} exited (code ${exit.code}, signal ${exit.signal ?? "none"}); its error output ended:\n` +
        this.#stderr.split("\n").slice(-12).join("\n"),
    );
  }

  get stdout(): string {
    return this.#stdout;
  }

  get stderr(): string {
    return this.#stderr;
  }

  /** Waits until stdout+stderr match `pattern`, failing with the output so far after `timeoutMs`. */
  async waitFor(pattern: RegExp, timeoutMs = 30_000): Promise<RegExpMatchArray> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const match = (this.#stdout + this.#stderr).match(pattern);
      if (match) return match;
      if (this.#exit !== undefined) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await Promise.race([Promise.all(this.#readers), new Promise((r) => setTimeout(r, 200))]);
    const match = (this.#stdout + this.#stderr).match(pattern);
    if (match) return match;
    throw new Error(
      `Output never matched ${pattern}${
        this.#exit !== undefined ? " (the program exited)" : ""
      }:\n${this.#stdout}\n${this.#stderr}`,
    );
  }

  /**
   * Sends SIGTERM (or `signal`), waits for exit, then ends whatever the program left running in its process
   * group: a program that crashed did not stop its own children (an agent's proxy), and they would hold its
   * output open, so the wait for that output would never end.
   */
  async stop(signal: Deno.Signal = "SIGTERM"): Promise<Deno.CommandStatus> {
    try {
      this.child.kill(signal);
    } catch {
      // Already exited.
    }
    const status = await this.#done;
    await endProcessGroup(this.child.pid);
    await Promise.all(this.#readers);
    return status;
  }
}

/** Whether this process may run `sh`; asked once. */
let mayRunSh: boolean | undefined;

/**
 * Kills what is left of the process group `pid` led (every program {@link spawnDeno} starts leads its own).
 * Through `sh`: `Deno.kill` of a group needs unscoped run permission, which the tests do not have. A caller
 * without `sh` (a benchmark, a browser test's own runner) keeps the old wait.
 */
async function endProcessGroup(pid: number): Promise<void> {
  mayRunSh ??= Deno.permissions.querySync({ name: "run", command: "sh" }).state === "granted";
  if (!mayRunSh) return;
  await new Deno.Command("sh", {
    args: ["-c", `kill -9 -${pid} 2>/dev/null; true`],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).output();
}

/**
 * Starts a program in the background, in the repository or in `cwd` (where it then finds its `./var/…` and
 * `./etc/…` files). Callers must `stop()` it.
 */
export function startProgram(
  program: ProgramName,
  args: string[],
  env: Record<string, string> = {},
  cwd?: string,
): RunningProgram {
  return spawnDeno(
    [...(cwd === undefined ? programArgs(program) : programArgsAnywhere(program)), ...args],
    env,
    cwd,
  );
}

/** Starts `deno <args>` in the background with only PATH, HOME and DENO_DIR inherited, plus `env`. */
export function spawnDeno(
  args: readonly string[],
  env: Record<string, string>,
  cwd?: string | URL,
): RunningProgram {
  const child = new Deno.Command("deno", {
    args: [...args],
    cwd: cwd ?? ROOT,
    env: baseEnv(env),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    // Its own process group, so `stop()` can end what it leaves behind.
    detached: true,
  }).spawn();
  return new RunningProgram(child);
}

/**
 * Where `freePort` looks: below Linux's default ephemeral range (32768–60999), from which both `port: 0`
 * listeners and every outgoing connection take their local ports. A port picked there could be taken by some
 * client's connection between the pick and the program's bind (seen in CI as "address already in use").
 */
const PORT_RANGE = { from: 20_000, to: 32_767 };

/** A loopback port that was free a moment ago, outside the range outgoing connections draw from. */
export function freePort(): number {
  // A port just closed can be handed out again at once: never give the same one twice in a row of calls
  // (a program's five addresses are picked together and would otherwise collide now and then).
  for (;;) {
    const port = PORT_RANGE.from + Math.floor(Math.random() * (PORT_RANGE.to - PORT_RANGE.from + 1));
    if (recentPorts.includes(port)) continue;
    try {
      Deno.listen({ hostname: "127.0.0.1", port }).close();
    } catch (error) {
      if (error instanceof Deno.errors.AddrInUse) continue;
      throw error;
    }
    recentPorts.push(port);
    if (recentPorts.length > 64) recentPorts.shift();
    return port;
  }
}

/** Ports `freePort` handed out lately. */
const recentPorts: number[] = [];

function baseEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = { NO_COLOR: "1" };
  for (const name of ["PATH", "HOME", "DENO_DIR"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...extra };
}

async function collect(stream: ReadableStream<Uint8Array>, sink: (text: string) => void): Promise<void> {
  for await (const chunk of stream) sink(decoder.decode(chunk, { stream: true }));
}

/** Listen addresses for every server of `mesh-discovery discovery`, each on a free loopback port. */
export interface DiscoveryAddresses {
  readonly grpcAddr: string;
  readonly secureGRPCAddr: string;
  readonly httpAddr: string;
  readonly httpsAddr: string;
  readonly monitoringAddr: string;
  readonly ctrlzPort: string;
}

/** Free loopback addresses for every discovery server, with `overrides` taking precedence. */
export function discoveryAddresses(overrides: Partial<DiscoveryAddresses> = {}): DiscoveryAddresses {
  const addr = () => `127.0.0.1:${freePort()}`;
  return {
    grpcAddr: addr(),
    secureGRPCAddr: addr(),
    httpAddr: addr(),
    httpsAddr: addr(),
    monitoringAddr: addr(),
    ctrlzPort: String(freePort()),
    ...overrides,
  };
}

/** `mesh-discovery discovery` arguments binding every server to the given addresses. */
export function discoveryArgs(addresses: DiscoveryAddresses, extra: string[] = []): string[] {
  return [
    "discovery",
    "--grpcAddr",
    addresses.grpcAddr,
    "--secureGRPCAddr",
    addresses.secureGRPCAddr,
    "--httpAddr",
    addresses.httpAddr,
    "--httpsAddr",
    addresses.httpsAddr,
    "--monitoringAddr",
    addresses.monitoringAddr,
    "--ctrlz_port",
    addresses.ctrlzPort,
    ...extra,
  ];
}

/**
 * Waits until `mesh-discovery`'s `/ready` on `httpAddr` answers 200: every listener accepts, every source has
 * synced, and a new xDS stream is served rather than told to come back (as a real proxy would retry).
 */
export async function untilReady(httpAddr: string, timeoutMs = 20_000): Promise<void> {
  await poll(`mesh-discovery at ${httpAddr} to be ready`, async () => {
    const response = await fetch(`http://${httpAddr}/ready`);
    const body = await response.text();
    if (response.status === 200) return true;
    throw new Error(`/ready answered ${response.status}: ${body.trim()}`);
  }, timeoutMs);
}

/** The flags that make mesh-discovery read the orchestrator whose kubeconfig is at `kubeconfigPath`. */
export function orchestratorFlags(kubeconfigPath: string): string[] {
  return ["--registries", "Orchestrator", "--orchconfig", kubeconfigPath];
}
