/**
 * Proxies leaving never take `mesh-discovery` down. The real server serves a config directory; ADS clients in
 * a separate process connect, receive config, and leave in each way real clients leave (GOAWAY with streams
 * open, RST_STREAM, half-close then cancel then close at once, the process killed, leaving mid-push), for
 * several rounds. Afterwards the server process is still running and serves a new proxy.
 */
import assert from "node:assert/strict";
import http2 from "node:http2";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { writeGreeterConfig } from "./helpers/greeter_mesh.ts";
import { discoveryAddresses, discoveryArgs, type RunningProgram, startProgram } from "./helpers/programs.ts";
import type { LeavingWay } from "./helpers/leaving_proxies.ts";
import { waitFor } from "../shared/testing/wait_for.ts";

const SCRIPT = fileURLToPath(new URL("./helpers/leaving_proxies.ts", import.meta.url));
const ROOT = fileURLToPath(new URL("../", import.meta.url));
const ROUNDS = 3;
/** Connections per group of proxies; each has one ADS stream, open when the connection leaves. */
const CONNECTIONS = 10;
const STREAMS = 1;
/** Pushes every group receives before leaving, so each session ends with pushed data and ACKs behind it. */
const PUSHES = 3;
/**
 * Services in the mesh besides the greeter: responses then outgrow HTTP/2's initial 64 KiB flow-control
 * window, as a real mesh's do, so sessions end with flow control in play.
 */
const SERVICES = 400;
/** How long one group of proxies may take to connect and receive config, or to leave. */
const STEP_MS = 20_000;

/** One run of the leaving-proxies process, read line by line. */
class LeavingProxies {
  readonly #child: Deno.ChildProcess;
  readonly #lines: AsyncIterator<string>;
  #stderr = "";
  readonly #stderrDone: Promise<void>;

  constructor(addr: string, way: LeavingWay, connections: number, streams: number, pushes: number) {
    const child = new Deno.Command("deno", {
      args: [
        "run",
        "--allow-net=127.0.0.1",
        "--allow-env",
        SCRIPT,
        addr,
        way,
        ...[connections, streams, pushes].map(String),
      ],
      cwd: ROOT,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#child = child;
    this.#lines = child.stdout.pipeThrough(new TextDecoderStream()).pipeThrough(splitLines())
      [Symbol.asyncIterator]();
    this.#stderrDone = (async () => {
      for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) {
        this.#stderr += chunk;
      }
    })();
  }

  /** The next JSON line, failing after `STEP_MS` or when the process ends first. */
  async next(what: string): Promise<Record<string, unknown>> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Timed out waiting for ${what}:\n${this.#stderr}`)), STEP_MS);
    });
    try {
      const line = await Promise.race([this.#lines.next(), timeout]);
      if (line.done) throw new Error(`The proxies exited before ${what}:\n${this.#stderr}`);
      const value = JSON.parse(line.value);
      if (value.error) throw new Error(`The proxies failed before ${what}: ${value.error}`);
      return value;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Waits for the process to exit (killing it with `signal` first when given) and its output to drain. */
  async end(signal?: Deno.Signal): Promise<Deno.CommandStatus> {
    if (signal) {
      try {
        this.#child.kill(signal);
      } catch {
        // Already exited.
      }
    }
    const status = await this.#child.status;
    await this.#stderrDone;
    return status;
  }
}

function splitLines(): TransformStream<string, string> {
  let buffer = "";
  return new TransformStream({
    transform(chunk, controller) {
      buffer += chunk;
      const parts = buffer.split("\n");
      buffer = parts.pop() ?? "";
      for (const part of parts) if (part.trim()) controller.enqueue(part);
    },
  });
}

/** A ServiceEntry that adds a cluster for every proxy: writing one makes the server push CDS to all. */
function extraServiceYaml(n: number | string): string {
  return `apiVersion: networking.mesh.io/v1beta1
kind: ServiceEntry
metadata:
  name: extra-${n}
  namespace: example
spec:
  hosts:
    - extra-${n}.example.svc.cluster.local
  location: MESH_INTERNAL
  resolution: STATIC
  ports:
    - number: 7070
      name: grpc
      protocol: GRPC
  endpoints:
    - address: 127.0.0.1
`;
}

const PREFACE = new TextEncoder().encode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

/** Writes `bytes` on a new connection to `address` and reads until the server closes it. */
async function sendRaw(address: string, bytes: Uint8Array): Promise<void> {
  const [hostname, port] = address.split(":");
  const conn = await Deno.connect({ hostname, port: Number(port) });
  try {
    await conn.write(bytes);
    const buffer = new Uint8Array(4096);
    while ((await conn.read(buffer)) !== null) { /* until the server closes */ }
  } catch {
    // A reset is a close too.
  } finally {
    try {
      conn.close();
    } catch {
      // Already closed.
    }
  }
}

/** The lines of the server's metrics that start with `prefix`, sorted. */
async function metricLines(monitoringAddr: string, prefix: string): Promise<string[]> {
  const text = await (await fetch(`http://${monitoringAddr}/metrics`)).text();
  return text.split("\n").filter((line) => line.startsWith(prefix)).sort();
}

/** Fails naming the exit and the server's last output when the server is no longer running. */
function assertRunning(server: RunningProgram, exited: () => Deno.CommandStatus | undefined, after: string) {
  const status = exited();
  if (status) {
    const tail = `${server.stdout}\n${server.stderr}`.split("\n").slice(-20).join("\n");
    assert.fail(
      `mesh-discovery died after ${after} (code ${status.code}, signal ${status.signal}); last output:\n${tail}`,
    );
  }
}

Deno.test("mesh-discovery survives proxies leaving in every way and still serves new ones", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "mesh_leaving_e2e_" });
  const addresses = discoveryAddresses();
  let server: RunningProgram | undefined;
  try {
    await writeGreeterConfig(dir, { v1: 1, v2: 2 }, 50, 50);
    await Deno.writeTextFile(
      join(dir, "mesh.yaml"),
      Array.from({ length: SERVICES }, (_, i) => extraServiceYaml(`mesh-${i}`)).join("---\n"),
    );
    server = startProgram(
      "mesh-discovery",
      discoveryArgs(addresses, ["--registries", "Mock", "--configDir", dir, "--log_as_json"]),
    );
    let status: Deno.CommandStatus | undefined;
    server.child.status.then((s) => status = s);
    await server.waitFor(/"msg":"discovery server started"/);
    const running = server;
    let extraServices = 0;
    /** Adds a service: every proxy's wildcard CDS changes, so the server pushes to all of them. */
    const push = () =>
      Deno.writeTextFile(join(dir, `extra-${++extraServices}.yaml`), extraServiceYaml(extraServices));

    const leave = async (way: LeavingWay, round: number) => {
      const proxies = new LeavingProxies(addresses.grpcAddr, way, CONNECTIONS, STREAMS, PUSHES);
      try {
        assert.deepEqual(await proxies.next("config to reach every stream"), {
          ready: CONNECTIONS * STREAMS,
        });
        for (let k = 1; k <= PUSHES; k++) {
          await push();
          assert.deepEqual(await proxies.next(`push ${k} to reach every stream`), { pushed: k });
        }
        if (way === "stay") {
          await proxies.end("SIGKILL");
          return;
        }
        if (way === "push") await push();
        assert.deepEqual(await proxies.next("the proxies to leave"), { left: way });
        assert.equal((await proxies.end()).code, 0);
      } finally {
        await proxies.end("SIGKILL");
        assertRunning(running, () => status, `round ${round} of proxies leaving by "${way}"`);
      }
    };

    // A fresh server meeting the half-close sequence first is the most sensitive probe of the runtime's HTTP/2
    // session handling, so each round starts with it.
    for (let round = 1; round <= ROUNDS; round++) {
      for (const way of ["halfclose", "goaway", "cancel", "stay", "push"] as const) {
        const described = way === "stay" ? "killed (sockets gone mid-stream)" : way;
        const ok = await t.step(`round ${round}: proxies leave by ${described}`, () => leave(way, round));
        if (!ok) return;
      }
    }

    await t.step("every session the proxies closed is counted in discovery_xds_closed_sessions", async () => {
      const expected = ROUNDS * 5 * CONNECTIONS;
      const counted = async () => {
        const [line] = await metricLines(addresses.monitoringAddr, "discovery_xds_closed_sessions ");
        return line === undefined ? undefined : Number(line.split(" ")[1]);
      };
      let value: number | undefined;
      await waitFor(async () => (value = await counted()) === expected, "every session counted", STEP_MS, 100)
        .catch(() => {});
      assert.equal(value, expected);
    });

    await t.step(
      "each connection may hold 100 streams at once (MESH_GPRC_MAXSTREAMS's default)",
      async () => {
        const session = http2.connect(`http://${addresses.grpcAddr}`);
        try {
          const settings = await new Promise<http2.Settings>((resolve, reject) => {
            session.once("remoteSettings", resolve);
            session.once("error", reject);
          });
          assert.equal(settings.maxConcurrentStreams, 100);
        } finally {
          session.destroy();
        }
      },
    );

    await t.step(
      "peers that break HTTP/2 are dropped alone, counted by reason and logged at warn",
      async () => {
        await sendRaw(addresses.grpcAddr, new TextEncoder().encode("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
        const dataOnStream0 = [0, 0, 1, 0x0, 0, 0, 0, 0, 0, 7];
        await sendRaw(
          addresses.grpcAddr,
          Uint8Array.from([...PREFACE, 0, 0, 0, 0x4, 0, 0, 0, 0, 0, ...dataOnStream0]),
        );
        const counted = () => metricLines(addresses.monitoringAddr, "discovery_xds_dropped_connections{");
        let lines: string[] = [];
        await waitFor(async () => (lines = await counted()).length >= 2, "both drops counted", STEP_MS, 100)
          .catch(() => {});
        // The proxies of every round left in ordinary ways: none of them is counted.
        assert.deepEqual(lines, [
          'discovery_xds_dropped_connections{reason="not_http2"} 1',
          'discovery_xds_dropped_connections{reason="protocol_error"} 1',
        ]);
        await running.waitFor(/"level":"warn".*ADS gRPC server dropped a peer.*"reason":"protocol_error"/);
        assertRunning(running, () => status, "the hostile peers");
      },
    );

    await t.step("afterwards the server is running and serves a new proxy", async () => {
      const proxy = new LeavingProxies(addresses.grpcAddr, "cancel", 1, 1, 0);
      try {
        assert.deepEqual(await proxy.next("config for the new proxy"), { ready: 1 });
      } finally {
        await proxy.end("SIGKILL");
      }
      assertRunning(running, () => status, "every round");
    });
  } finally {
    await server?.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
