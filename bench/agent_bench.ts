/**
 * The agent's own cost (BENCHMARKS.md, "The agent at rest and its xDS relay"; target: idle RSS ≤ 60 MiB).
 *
 * 1. Idle RSS: the real `mesh-discovery` (plaintext ADS, examples/config) and the real `mesh-agent proxy` with
 *    `FILE_MOUNTED_CERTS` (no CA) and the stand-in proxy as its Envoy, holding one ADS stream through the
 *    relay; once ready, the agent's VmRSS is sampled every second for `--idle` seconds (V8's memory reducer
 *    first runs tens of seconds after startup: the last samples are the agent at rest). `--agent-v8-flags=a,b`
 *    starts the agent with those V8 flags (through `DENO_V8_FLAGS`).
 * 2. Relay overhead: in this process, an ADS server answering every request with a response of `--size` KiB,
 *    and a client asking `--mib` MiB of them, first straight from the server, then through `startXdsProxy` on
 *    a Unix socket; the difference in CPU time and wall time per MiB relayed is the relay's cost.
 *
 * `deno run --allow-net --allow-read --allow-write --allow-env --allow-sys --allow-run bench/agent_bench.ts
 * [--idle 60] [--mib 256] [--size 1024] [--agent-v8-flags=--flag,--flag] [--no-relay] [--no-idle]`
 *
 * @module
 */
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import { ADS_SERVICE_DEFINITION } from "../proto/ads_service.ts";
import { frameDiscoveryResponse } from "../proto/discovery_frame.ts";
import { loadEnvoySchema } from "../proto/envoy_schema.ts";
import { TYPE_URL } from "../proto/type_urls.ts";
import { startGrpcServer } from "../shared/grpc/grpc_server.ts";
import { silentLogger } from "../shared/log/logger.ts";
import {
  certificatesToPem,
  createSelfSignedCa,
  exportPrivateKeyPem,
  generateKeyPair,
  issueCertificate,
} from "../shared/pki/mod.ts";
import { startXdsProxy } from "../agent/proxy/xds_proxy.ts";
import { discoveryAddresses, discoveryArgs, freePort, startProgram } from "../tests/helpers/programs.ts";
import { startAgentProgram, writeStandInLauncher } from "../tests/helpers/agent_program.ts";
import { loadAverage, machineInfo, processCpuMs, processMemory } from "./bench_processes.ts";

const flag = (name: string, fallback: number) => {
  const at = Deno.args.indexOf(`--${name}`);
  return at < 0 ? fallback : Number(Deno.args[at + 1]);
};
const IDLE_S = flag("idle", 60);
const AGENT_V8_FLAGS = Deno.args.find((a) => a.startsWith("--agent-v8-flags="))?.slice(
  "--agent-v8-flags=".length,
);
const MIB = flag("mib", 256);
const SIZE_KIB = flag("size", 1024);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Key material for `FILE_MOUNTED_CERTS`, written into `<dir>/etc/certs`. */
async function mountCerts(dir: string): Promise<void> {
  const ca = await createSelfSignedCa({ org: "cluster.local", ttlMs: 86_400_000, keyAlgorithm: "ECDSA" });
  const keys = await generateKeyPair({ algorithm: "ECDSA" });
  const leaf = await issueCertificate(ca, {
    publicKey: keys.publicKey,
    uris: ["spiffe://cluster.local/ns/example/sa/app"],
    ttlMs: 86_400_000,
  });
  await Deno.mkdir(`${dir}/etc/certs`, { recursive: true });
  await Deno.writeTextFile(`${dir}/etc/certs/key.pem`, await exportPrivateKeyPem(keys.privateKey));
  await Deno.writeTextFile(`${dir}/etc/certs/cert-chain.pem`, certificatesToPem([leaf]));
  await Deno.writeTextFile(`${dir}/etc/certs/root-cert.pem`, ca.certificatePem);
}

async function idleRss(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "agent_bench_" });
  const addresses = discoveryAddresses();
  const discovery = startProgram(
    "mesh-discovery",
    discoveryArgs(addresses, ["--registries", "Mock", "--configDir", "examples/config", "--log_as_json"]),
  );
  try {
    await discovery.waitFor(/"msg":"discovery server started"/, 120_000);
    await mountCerts(dir);
    const standIn = await writeStandInLauncher(dir);
    const statusPort = freePort();
    const agent = startAgentProgram(dir, "sidecar", standIn, {
      POD_NAME: "app-1",
      POD_NAMESPACE: "example",
      INSTANCE_IP: "10.9.9.9",
      FILE_MOUNTED_CERTS: "true",
      ...(AGENT_V8_FLAGS ? { DENO_V8_FLAGS: AGENT_V8_FLAGS } : {}),
      PROXY_CONFIG: JSON.stringify({
        discoveryAddress: addresses.grpcAddr,
        controlPlaneAuthPolicy: "NONE",
        binaryPath: standIn,
        proxyAdminPort: freePort(),
        statusPort,
      }),
    });
    try {
      const deadline = Date.now() + 120_000;
      while (Date.now() < deadline) {
        const status = await fetch(`http://127.0.0.1:${statusPort}/healthz/ready`).then(async (r) => {
          await r.body?.cancel();
          return r.status;
        }).catch(() => 0);
        if (status === 200) break;
        await sleep(500);
      }
      const pid = agent.child.pid;
      const samples: number[] = [];
      for (let i = 0; i < IDLE_S; i++) {
        await sleep(1000);
        samples.push(processMemory(pid).rssKiB / 1024);
      }
      const last = processMemory(pid);
      const series = samples.map((s) => Math.round(s));
      samples.sort((a, b) => a - b);
      console.log(JSON.stringify({
        scenario: "agent idle, one proxy stream relayed",
        v8Flags: AGENT_V8_FLAGS ?? "",
        rssMiBEachSecond: series.join(" "),
        atRestMiB: {
          rss: +(last.rssKiB / 1024).toFixed(1),
          anon: +(last.rssAnonKiB / 1024).toFixed(1),
          file: +(last.rssFileKiB / 1024).toFixed(1),
        },
        rssMiB: {
          min: +samples[0].toFixed(1),
          median: +samples[Math.floor(samples.length / 2)].toFixed(1),
          max: +samples.at(-1)!.toFixed(1),
        },
        peakRssMiB: +(processMemory(pid).peakRssKiB / 1024).toFixed(1),
        agentCpuMsDuringIdle: processCpuMs(pid),
      }));
    } finally {
      await agent.stop();
    }
  } finally {
    await discovery.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

/** An ADS server answering every request with one response carrying `bytes` of resource. */
async function bulkAdsServer(bytes: number) {
  const resource = new Uint8Array(bytes).map((_, i) => (i * 31) % 251);
  let nonce = 0;
  return await startGrpcServer({
    name: "bench upstream",
    listen: { tcp: "127.0.0.1:0", flag: "bench" },
    logger: silentLogger,
    limits: { maxReceiveMessageBytes: 64 * 1024 * 1024 },
    services: [{
      definition: ADS_SERVICE_DEFINITION,
      implementation: {
        StreamAggregatedResources: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
          call.on("data", () => {
            nonce++;
            call.write(Buffer.from(frameDiscoveryResponse({
              version_info: String(nonce),
              resources: [resource],
              type_url: TYPE_URL.cluster,
              nonce: String(nonce),
            })));
          });
          call.on("error", () => {});
          call.on("end", () => call.end());
        },
        DeltaAggregatedResources: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => call.end(),
      } as never,
    }],
  });
}

/** Asks `count` responses one after another at `target`; resolves with wall ms and this process's CPU ms. */
async function fetchResponses(target: string, count: number): Promise<{ wallMs: number; cpuMs: number }> {
  const requestType = loadEnvoySchema().lookupType("envoy.service.discovery.v3.DiscoveryRequest");
  const Client = grpc.makeClientConstructor(ADS_SERVICE_DEFINITION, "AggregatedDiscoveryService");
  const client = new Client(target, grpc.credentials.createInsecure(), {
    "grpc.max_receive_message_length": -1,
  });
  const request = (nonce: string) =>
    Buffer.from(
      requestType.encode(requestType.fromObject({
        type_url: TYPE_URL.cluster,
        response_nonce: nonce,
        node: { id: "sidecar~10.0.0.1~bench.default~default.svc.cluster.local" },
      })).finish(),
    );
  const cpuBefore = processCpuMs(Deno.pid);
  const started = performance.now();
  try {
    // deno-lint-ignore no-explicit-any
    const call = (client as any).StreamAggregatedResources() as grpc.ClientDuplexStream<Buffer, Buffer>;
    let received = 0;
    await new Promise<void>((resolve, reject) => {
      call.on("error", reject);
      call.on("data", () => {
        received++;
        if (received === count) resolve();
        else call.write(request(String(received)));
      });
      call.write(request(""));
    });
    call.cancel();
    return { wallMs: performance.now() - started, cpuMs: processCpuMs(Deno.pid) - cpuBefore };
  } finally {
    client.close();
  }
}

async function relayOverhead(): Promise<void> {
  const count = Math.max(1, Math.round(MIB * 1024 / SIZE_KIB));
  const upstream = await bulkAdsServer(SIZE_KIB * 1024);
  const dir = await Deno.makeTempDir({ prefix: "agent_bench_relay_" });
  const relay = await startXdsProxy({
    socket: `${dir}/XDS`,
    upstream: { address: upstream.address, mutualTls: false, serverName: "unused" },
    secrets: { current: undefined, onChange: () => () => {} },
    log: silentLogger,
    maxReceiveMessageBytes: 64 * 1024 * 1024,
  });
  try {
    // A warm-up of each path, so neither pays for compiling the code the other already ran.
    await fetchResponses(upstream.address, 8);
    await fetchResponses(`unix:${dir}/XDS`, 8);
    const rssBefore = processMemory(Deno.pid).rssKiB;
    const direct = await fetchResponses(upstream.address, count);
    const relayed = await fetchResponses(`unix:${dir}/XDS`, count);
    const mib = count * SIZE_KIB / 1024;
    console.log(JSON.stringify({
      scenario: `relay, ${count} responses of ${SIZE_KIB} KiB (${mib} MiB)`,
      direct: { wallMs: Math.round(direct.wallMs), cpuMs: direct.cpuMs },
      relayed: { wallMs: Math.round(relayed.wallMs), cpuMs: relayed.cpuMs },
      overheadPerMiB: {
        cpuMs: +((relayed.cpuMs - direct.cpuMs) / mib).toFixed(2),
        wallMs: +((relayed.wallMs - direct.wallMs) / mib).toFixed(2),
      },
      rssGrowthMiB: +((processMemory(Deno.pid).rssKiB - rssBefore) / 1024).toFixed(1),
    }));
  } finally {
    await relay.close(0);
    await upstream.close(0);
    await Deno.remove(dir, { recursive: true });
  }
}

console.log(JSON.stringify({ machine: machineInfo(), load: loadAverage(), date: new Date().toISOString() }));
if (!Deno.args.includes("--no-relay")) await relayOverhead();
if (!Deno.args.includes("--no-idle")) await idleRss();
console.log(JSON.stringify({ load: loadAverage() }));
