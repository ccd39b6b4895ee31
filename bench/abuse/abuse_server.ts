/**
 * The real `mesh-discovery discovery` for the abuse and soak benchmarks: the permissions of its `deno task`,
 * free loopback ports, the Mock registry and a temp config dir; optionally under a lowered open-file limit
 * (`sh -c 'ulimit -n N; exec deno run …'`, so the pid stays the server's), and optionally in a working
 * directory holding the injector's files, so that it serves `/inject`.
 *
 * @module
 */
import {
  type DiscoveryAddresses,
  discoveryAddresses,
  discoveryArgs,
  programArgs,
  programArgsAnywhere,
  RunningProgram,
} from "../../tests/helpers/programs.ts";

const ROOT = new URL("../../", import.meta.url);
const INJECTION_FIXTURES = new URL("tests/fixtures/injection/inputs/", ROOT);

/** How to start the server. */
export interface ServerOptions {
  readonly configDir: string;
  /** Extra environment (e.g. `ENABLE_ADMIN_ENDPOINTS=true`, `ROOT_CA_DIR`). */
  readonly env?: Record<string, string>;
  /** The open-file limit to start it under; the inherited one when absent. */
  readonly fdLimit?: number;
  /** Serve `/debug/pprof` (`--profile`). */
  readonly profile?: boolean;
  /** The working directory, where the server finds `./var/lib/mesh/inject/`; the repository when absent. */
  readonly workDir?: string;
}

/**
 * Writes the injector's config and values where the server reads them from its working directory `dir` (the
 * reference's mount points): the default ones of the injection fixtures, as the injection end-to-end test does.
 */
export async function writeInjectorFiles(dir: string): Promise<void> {
  const inject = `${dir}/var/lib/mesh/inject`;
  await Deno.mkdir(inject, { recursive: true });
  await Deno.copyFile(new URL("default.config.yaml", INJECTION_FIXTURES), `${inject}/config`);
  await Deno.copyFile(new URL("default.values.json", INJECTION_FIXTURES), `${inject}/values`);
}

/** A started server and where it listens. */
export interface AbuseServer {
  readonly program: RunningProgram;
  readonly addresses: DiscoveryAddresses;
  readonly pid: number;
  /** Resolves with the exit status once the process has exited, for whatever reason. */
  readonly exited: Promise<Deno.CommandStatus>;
  /** True once the process has exited. */
  hasExited(): boolean;
}

/** Starts the server and waits until it logs that it started. */
export async function startAbuseServer(options: ServerOptions): Promise<AbuseServer> {
  const addresses = discoveryAddresses();
  const args = [
    ...(options.workDir === undefined
      ? programArgs("mesh-discovery")
      : programArgsAnywhere("mesh-discovery")),
    ...discoveryArgs(addresses, [
      "--registries",
      "Mock",
      "--configDir",
      options.configDir,
      "--log_as_json",
      ...(options.profile ? ["--profile"] : []),
    ]),
  ];
  // The environment `startProgram` gives its programs; that helper cannot lower the open-file limit.
  const env: Record<string, string> = { NO_COLOR: "1", ...options.env };
  for (const name of ["PATH", "HOME", "DENO_DIR"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  const child = new Deno.Command(options.fdLimit === undefined ? "deno" : "sh", {
    args: options.fdLimit === undefined
      ? args
      : ["-c", `ulimit -n ${options.fdLimit} && exec deno "$@"`, "sh", ...args],
    cwd: options.workDir ?? ROOT,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const program = new RunningProgram(child);
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });
  await program.waitFor(/"msg":"discovery server started"/, 120_000);
  return { program, addresses, pid: child.pid, exited: status, hasExited: () => exited };
}
