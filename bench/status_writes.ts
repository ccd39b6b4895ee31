/**
 * Status writes per second at the status rate limit: the status writer against the in-process test API server
 * (loopback, same process), writing a `Reconciled` condition to each of N VirtualServices. Each write is a
 * fresh read and a replace of the status subresource, so it takes two requests of the QPS budget; the burst is
 * spent first, then writes go at QPS/2 a second.
 *
 * `deno run --allow-net=127.0.0.1 --allow-read --allow-write=/tmp --allow-env bench/status_writes.ts
 *   [--resources N] [--qps Q] [--burst B]` (defaults: 1000, and the registry's 100 and 500).
 *
 * @module
 */
import process from "node:process";
import { parseArgs } from "node:util";
import { ENV_VARS } from "../shared/env/env_vars.ts";
import { OrchApiServer } from "../shared/testing/orch_api_server.ts";
import { RecordingLogger } from "../shared/testing/recording_logger.ts";
import { loadOrchConfig } from "../discovery/orch/orch_client.ts";
import { orchHttp } from "../discovery/orch/orch_http.ts";
import { reconciledChange } from "../discovery/status/reconciled_condition.ts";
import { StatusWriter } from "../discovery/status/status_writer.ts";

const defaultOf = (name: string) => Number(ENV_VARS.find((v) => v.name === name)!.default);
const { values } = parseArgs({
  options: {
    resources: { type: "string", default: "1000" },
    qps: { type: "string", default: String(defaultOf("DISCOVERY_STATUS_QPS")) },
    burst: { type: "string", default: String(defaultOf("DISCOVERY_STATUS_BURST")) },
  },
});
const resources = Number(values.resources);
const qps = Number(values.qps);
const burst = Number(values.burst);

const api = OrchApiServer.start();
const dir = await Deno.makeTempDir({ prefix: "status_writes_bench_" });
await Deno.writeTextFile(`${dir}/kubeconfig`, api.kubeconfig());
for (let i = 0; i < resources; i++) {
  api.apply({
    apiVersion: "networking.mesh.io/v1beta1",
    kind: "VirtualService",
    metadata: { name: `vs-${i}`, namespace: `ns-${i % 20}` },
    spec: { hosts: [`svc-${i}`] },
  });
}
const done: number[] = [];
const writer = new StatusWriter({
  http: orchHttp(loadOrchConfig({ orchConfig: `${dir}/kubeconfig`, serviceHost: "" }), 5_000),
  qps,
  burst,
  log: new RecordingLogger(),
  onOutcome: (_ref, _part, outcome) => {
    if (outcome === "written") done.push(performance.now());
  },
});
const cpuBefore = process.cpuUsage();
const start = performance.now();
for (let i = 0; i < resources; i++) {
  writer.write(
    {
      group: "networking.mesh.io",
      version: "v1beta1",
      plural: "virtualservices",
      namespace: `ns-${i % 20}`,
      name: `vs-${i}`,
      generation: 1,
    },
    "Reconciled",
    reconciledChange({ acked: 3, total: 3 }, 1, () => new Date()),
  );
}
await writer.idle();
const seconds = (performance.now() - start) / 1000;
const burstWrites = Math.floor(burst / 2);
const afterBurst = done.slice(burstWrites);
const steady = afterBurst.length > 1
  ? (afterBurst.length - 1) / ((afterBurst.at(-1)! - afterBurst[0]) / 1000)
  : Number.NaN;
const cpu = process.cpuUsage(cpuBefore);
console.log(JSON.stringify({
  resources,
  qps,
  burst,
  written: done.length,
  seconds: Number(seconds.toFixed(2)),
  writesPerSecondOverall: Number((done.length / seconds).toFixed(1)),
  firstBurstWrites: Math.min(burstWrites, done.length),
  firstBurstSeconds: done.length >= burstWrites
    ? Number(((done[burstWrites - 1] - start) / 1000).toFixed(2))
    : undefined,
  writesPerSecondAfterBurst: Number(steady.toFixed(1)),
  requests: api.requests.filter((r) => r.includes("/virtualservices/")).length,
  cpuMs: Math.round((cpu.user + cpu.system) / 1000),
}));
writer.stop();
await api.close();
await Deno.remove(dir, { recursive: true });
