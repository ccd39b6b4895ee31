/**
 * A proxy writing requests to the agent's xDS relay while the discovery server reads none (#35): the relay and
 * a stalled discovery server run in a child process (`--serve`), this process is the proxy. It writes
 * `--mib` MiB of DiscoveryRequests of `--kib` KiB each on one ADS stream, then waits `--settle-s` seconds, and
 * reports the child's RSS before and after and how many requests the relay passed on
 * (`xds_proxy_requests`).
 *
 * `deno run --allow-net --allow-read --allow-write --allow-env --allow-sys --allow-run=deno,cat
 * bench/relay_request_flood.ts [--mib 256] [--kib 64] [--settle-s 5]`
 *
 * @module
 */
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import { ADS_SERVICE_DEFINITION } from "../proto/ads_service.ts";
import { loadEnvoySchema } from "../proto/envoy_schema.ts";
import { TYPE_URL } from "../proto/type_urls.ts";
import { startGrpcServer } from "../shared/grpc/grpc_server.ts";
import { silentLogger } from "../shared/log/logger.ts";
import { Metrics } from "../shared/metrics/metrics.ts";
import { startXdsProxy } from "../agent/proxy/xds_proxy.ts";
import { loadAverage, machineInfo, processMemory } from "./bench_processes.ts";

const flag = (name: string, fallback: number) => {
  const at = Deno.args.indexOf(`--${name}`);
  return at < 0 ? fallback : Number(Deno.args[at + 1]);
};

if (Deno.args.includes("--serve")) {
  await serve(Deno.args[Deno.args.indexOf("--serve") + 1]);
} else {
  await flood();
}

/** The child: a discovery server that reads nothing, the relay in front of it, and a line per `stdin` line. */
async function serve(socket: string): Promise<void> {
  const upstream = await startGrpcServer({
    name: "Stalled upstream",
    listen: { tcp: "127.0.0.1:0", flag: "--bench" },
    logger: silentLogger,
    services: [{
      definition: ADS_SERVICE_DEFINITION,
      implementation: {
        StreamAggregatedResources: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => call.pause(),
        DeltaAggregatedResources: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => call.end(),
      } as never,
    }],
  });
  const metrics = new Metrics("agent", { version: "bench", tag: "bench" });
  await startXdsProxy({
    socket,
    upstream: { address: upstream.address, mutualTls: false, serverName: "unused" },
    secrets: { current: undefined, onChange: () => () => {} },
    log: silentLogger,
    maxReceiveMessageBytes: 4 * 1024 * 1024,
    metrics,
  });
  console.log("ready");
  const lines = Deno.stdin.readable.pipeThrough(new TextDecoderStream());
  for await (const _ of lines) {
    const { values } = await metrics.counter("xds_proxy_requests").get();
    console.log(JSON.stringify({ relayed: values.reduce((sum, v) => sum + v.value, 0) }));
  }
  Deno.exit(0);
}

/** The parent: the proxy. */
async function flood(): Promise<void> {
  const mib = flag("mib", 256);
  const kib = flag("kib", 64);
  const settleS = flag("settle-s", 5);
  const dir = await Deno.makeTempDir({ prefix: "relay_flood_" });
  const socket = `${dir}/xds.sock`;
  const child = new Deno.Command("deno", {
    args: [
      "run",
      "--allow-net",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-sys",
      new URL(import.meta.url).pathname,
      "--serve",
      socket,
    ],
    stdin: "piped",
    stdout: "piped",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const writer = child.stdin.getWriter();
  const nextLine = async () => (await lines.read()).value?.trim() ?? "";
  const ask = async () => {
    await writer.write(new TextEncoder().encode("?\n"));
    return JSON.parse(await nextLine()) as { relayed: number };
  };
  try {
    if (await nextLine() !== "ready") throw new Error("the relay process did not start");
    const idle = processMemory(child.pid);
    const requestType = loadEnvoySchema().lookupType("envoy.service.discovery.v3.DiscoveryRequest");
    const request = Buffer.from(
      requestType.encode(requestType.fromObject({
        type_url: TYPE_URL.cluster,
        resource_names: ["n".repeat(kib * 1024)],
      })).finish(),
    );
    const Client = grpc.makeClientConstructor(ADS_SERVICE_DEFINITION, "AggregatedDiscoveryService");
    const client = new Client(`unix:${socket}`, grpc.credentials.createInsecure());
    // deno-lint-ignore no-explicit-any
    const call = (client as any).StreamAggregatedResources() as grpc.ClientDuplexStream<Buffer, Buffer>;
    call.on("error", () => {});
    const count = Math.ceil((mib * 1024) / kib);
    for (let i = 0; i < count; i++) {
      call.write(request);
      if (i % 64 === 63) await new Promise((resolve) => setTimeout(resolve, 0));
    }
    await new Promise((resolve) => setTimeout(resolve, settleS * 1000));
    const after = processMemory(child.pid);
    const { relayed } = await ask();
    console.log(`Machine: ${JSON.stringify(machineInfo())}; load average ${loadAverage()}`);
    console.log(
      `wrote ${count} requests of ${kib} KiB (${mib} MiB); relay passed on ${relayed}; relay RSS ` +
        `${Math.round(idle.rssKiB / 1024)} → ${Math.round(after.rssKiB / 1024)} MiB ` +
        `(peak ${Math.round(after.peakRssKiB / 1024)} MiB)`,
    );
    call.cancel();
    client.close();
  } finally {
    await writer.close().catch(() => {});
    await child.status;
    await Deno.remove(dir, { recursive: true });
  }
}
