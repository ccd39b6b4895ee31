/**
 * Runs `xds_client.ts` as a subprocess with an xDS bootstrap in its environment and talks to it line by line.
 *
 * @module
 */
import { fileURLToPath } from "node:url";

const SCRIPT = fileURLToPath(new URL("./xds_client.ts", import.meta.url));
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** The repository and, when it is a link to elsewhere, the real node_modules folder the client loads from. */
function readablePaths(): string[] {
  const paths = [ROOT];
  try {
    const modules = Deno.realPathSync(`${ROOT}node_modules`);
    if (!modules.startsWith(ROOT)) paths.push(modules);
  } catch {
    // No node_modules folder: the npm packages come from Deno's cache, which Deno reads without a permission.
  }
  return paths;
}

/**
 * The client's permissions: connect to loopback only (the discovery server and the backends); read the
 * repository (grpc-js-xds loads Envoy's `.proto` files from node_modules at runtime, testing each include path
 * with `fs.accessSync`, which in Deno asks for the user and group ids); environment, because grpc-js reads
 * its settings (and the bootstrap) from `process.env`.
 */
export const XDS_CLIENT_PERMISSIONS: readonly string[] = [
  "--allow-net=127.0.0.1",
  `--allow-read=${readablePaths().join(",")}`,
  "--allow-sys=uid,gid",
  "--allow-env",
];

/** The answer to `call <n>`: calls per backend name, failed calls per error text. */
export interface CallResult {
  readonly counts: Readonly<Record<string, number>>;
  readonly errors: Readonly<Record<string, number>>;
}

/** The node a bootstrap declares. */
export interface BootstrapNode {
  readonly id: string;
  readonly metadata: Record<string, unknown>;
  readonly locality?: { readonly region?: string; readonly zone?: string; readonly sub_zone?: string };
}

/**
 * gRPC's xDS bootstrap for a client of the discovery server at `xdsAddress` (`host:port`). grpc-js-xds refuses a
 * node without `locality`, so an empty one is sent when none is given.
 */
export function grpcBootstrap(xdsAddress: string, node: BootstrapNode) {
  return {
    xds_servers: [{
      server_uri: xdsAddress,
      channel_creds: [{ type: "insecure" }],
      server_features: ["xds_v3"],
    }],
    node: { locality: {}, ...node },
  };
}

/** A running client process. */
export class XdsClientProcess {
  readonly #child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #lines: AsyncIterator<string>;
  #stderr = "";
  readonly #stderrDone: Promise<void>;

  private constructor(child: Deno.ChildProcess) {
    this.#child = child;
    this.#writer = child.stdin.getWriter();
    this.#lines = lines(child.stdout)[Symbol.asyncIterator]();
    this.#stderrDone = (async () => {
      for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) this.#stderr += chunk;
    })();
  }

  /** Starts a client of `target` (e.g. `xds:///greeter.example.svc.cluster.local:7070`). */
  static start(target: string, bootstrap: unknown, env: Record<string, string> = {}): XdsClientProcess {
    const child = new Deno.Command("deno", {
      args: ["run", ...XDS_CLIENT_PERMISSIONS, SCRIPT, target],
      cwd: ROOT,
      clearEnv: true,
      env: { ...baseEnv(), ...env, GRPC_XDS_BOOTSTRAP_CONFIG: JSON.stringify(bootstrap) },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    return new XdsClientProcess(child);
  }

  /** What the client wrote to stderr so far (gRPC traces when GRPC_TRACE is set). */
  get stderr(): string {
    return this.#stderr;
  }

  /** Makes `n` calls and returns how they went. */
  async call(n: number): Promise<CallResult> {
    await this.#writer.write(new TextEncoder().encode(`call ${n}\n`));
    const next = await this.#lines.next();
    if (next.done) throw new Error(`The xDS client exited before answering:\n${this.#stderr}`);
    return JSON.parse(next.value) as CallResult;
  }

  /** Asks the client to exit, and kills it if it does not within a few seconds. */
  async close(): Promise<void> {
    try {
      await this.#writer.write(new TextEncoder().encode("quit\n"));
      await this.#writer.close();
    } catch {
      // Already gone.
    }
    const timer = setTimeout(() => {
      try {
        this.#child.kill("SIGKILL");
      } catch {
        // Exited meanwhile.
      }
    }, 5_000);
    await this.#child.status;
    clearTimeout(timer);
    await this.#lines.return?.();
    await this.#stderrDone;
  }
}

async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let buffered = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    buffered += chunk;
    let newline: number;
    while ((newline = buffered.indexOf("\n")) >= 0) {
      yield buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
    }
  }
}

function baseEnv(): Record<string, string> {
  const env: Record<string, string> = { NO_COLOR: "1" };
  for (const name of ["PATH", "HOME", "DENO_DIR"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  return env;
}
