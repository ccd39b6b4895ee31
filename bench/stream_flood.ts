/**
 * One connection opening many ADS streams against the real `mesh-discovery`: how much memory the server takes,
 * how many streams it serves, and how much of it comes back after the peer leaves.
 *
 *   deno run --allow-net=127.0.0.1 --allow-read --allow-write --allow-env --allow-run=deno,cat \
 *     bench/stream_flood.ts [--services 400] [--streams 1000] [--maxStreams N] [--holdSeconds 30] \
 *     [--serverEnv NAME=VALUE]...
 *
 * The peer is `tests/helpers/leaving_proxies.ts` (one raw HTTP/2 connection, every stream a proxyless client
 * that ACKs); it leaves by GOAWAY once every stream holds config, or is killed after `--holdSeconds`, and the
 * server's RSS is read from /proc 1, 3, 10 and 30 s later. Prints one JSON line of figures. The server refuses
 * streams past `DISCOVERY_XDS_MAX_STREAMS_PER_PEER` (512); `--serverEnv DISCOVERY_XDS_MAX_STREAMS_PER_PEER=N`
 * raises it.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { join } from "node:path";
import { discoveryAddresses, discoveryArgs, startProgram } from "../tests/helpers/programs.ts";
import { processMemory } from "./bench_processes.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    services: { type: "string", default: "400" },
    streams: { type: "string", default: "1000" },
    maxStreams: { type: "string" },
    holdSeconds: { type: "string", default: "30" },
    serverEnv: { type: "string", multiple: true, default: [] },
  },
});
const services = Number(values.services);
const streams = Number(values.streams);
const holdMs = Number(values.holdSeconds) * 1000;

function serviceYaml(i: number): string {
  return `apiVersion: networking.mesh.io/v1beta1
kind: ServiceEntry
metadata:
  name: flood-${i}
  namespace: example
spec:
  hosts:
    - flood-${i}.example.svc.cluster.local
  location: MESH_INTERNAL
  resolution: STATIC
  ports:
    - number: 7070
      name: grpc
      protocol: GRPC
  endpoints:
    - address: 10.1.${Math.floor(i / 250)}.${i % 250 + 1}
`;
}

const mib = (kib: number) => Math.round(kib / 1024);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const dir = await Deno.makeTempDir({ prefix: "mesh_stream_flood_" });
const addresses = discoveryAddresses();
await Deno.writeTextFile(
  join(dir, "services.yaml"),
  Array.from({ length: services }, (_, i) => serviceYaml(i)).join("---\n"),
);
const env: Record<string, string> = Object.fromEntries(values.serverEnv.map((pair) => pair.split("=", 2)));
if (values.maxStreams) env.MESH_GPRC_MAXSTREAMS = values.maxStreams;
const server = startProgram(
  "mesh-discovery",
  discoveryArgs(addresses, ["--registries", "Mock", "--configDir", dir, "--log_as_json"]),
  env,
);
try {
  await server.waitFor(/"msg":"discovery server started"/, 60_000);
  await sleep(1000);
  const pid = server.child.pid;
  const idle = processMemory(pid).rssKiB;
  const connectedStreams = async () => {
    const text = await (await fetch(`http://${addresses.monitoringAddr}/metrics`)).text();
    return Number(/^discovery_xds (\d+)/m.exec(text)?.[1] ?? NaN);
  };
  const peer = new Deno.Command("deno", {
    args: [
      "run",
      "--allow-net=127.0.0.1",
      "--allow-env",
      new URL("../tests/helpers/leaving_proxies.ts", import.meta.url).pathname,
      addresses.grpcAddr,
      "goaway",
      "1",
      String(streams),
      "0",
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const started = Date.now();
  let killed = false;
  const ready = (async () => {
    let text = "";
    for await (const chunk of peer.stdout.pipeThrough(new TextDecoderStream())) {
      text += chunk;
      if (/"ready"/.test(text)) return true;
    }
    if (!killed) console.error(`the flooding peer exited: ${text.trim()}`);
    return false;
  })();
  let servedAllMs: number | undefined;
  const readyOrTimeout = await Promise.race([ready.then((r) => r ? "ready" : "exited"), sleep(holdMs)]);
  if (readyOrTimeout === "ready") servedAllMs = Date.now() - started;
  const atPeak = processMemory(pid);
  const servedDuring = await connectedStreams();
  killed = true;
  try {
    peer.kill("SIGKILL");
  } catch {
    // It left on its own (GOAWAY once every stream held config).
  }
  await peer.status;
  const after: Record<string, number> = {};
  let waited = 0;
  for (const second of [1, 3, 10, 30]) {
    await sleep(second * 1000 - waited);
    waited = second * 1000;
    after[`${second}s`] = mib(processMemory(pid).rssKiB);
  }
  const memj = async () => {
    const usage = await (await fetch(`http://127.0.0.1:${addresses.ctrlzPort}/memj/`)).json();
    return Object.fromEntries(Object.entries(usage).map(([k, v]) => [k, mib(Number(v) / 1024)]));
  };
  const usageAfter = await memj();
  const servedAfter = await connectedStreams();
  console.log(JSON.stringify({
    services,
    streams,
    maxStreams: values.maxStreams ?? "default",
    serverEnv: values.serverEnv,
    servedAllMs: servedAllMs ?? `not within ${holdMs} ms`,
    idleRssMiB: mib(idle),
    rssWithPeerMiB: mib(atPeak.rssKiB),
    peakRssMiB: mib(atPeak.peakRssKiB),
    rssAfterPeerLeftMiB: after,
    memoryUsageAfter30sMiB: usageAfter,
    streamsServedWithPeer: servedDuring,
    streamsServedAfter: servedAfter,
  }));
} finally {
  await server.stop();
  await Deno.remove(dir, { recursive: true });
}
