/**
 * Configuration analysis time per snapshot at the load benchmark's mesh (1000 services: a ServiceEntry, three
 * WorkloadEntries, a VirtualService and a DestinationRule each, 10 per namespace): the file-mode analyzers over
 * the config store, then all twenty with orchestrator objects of the same size (a Namespace per namespace, a
 * Service, a Deployment and three Pods per service). Prints p50/p99/max per run, sliced as the server runs it
 * and in one go (wall and CPU time), and the longest slice (BENCHMARKS.md; target ≤ 200 ms per snapshot at 1000 services).
 *
 * deno run --allow-read --allow-env bench/analysis_bench.ts [--services 1000] [--runs 30]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { cpuUsage } from "node:process";
import { parseResource } from "../shared/config/validate_resource.ts";
import { silentLogger } from "../shared/log/logger.ts";
import { LoopSlices } from "../shared/time/loop_slices.ts";
import { MemoryConfigStore } from "../discovery/config/memory_config_store.ts";
import { allAnalyzers, runnableAnalyzers } from "../discovery/analysis/all_analyzers.ts";
import { analyzeNow, analyzeSliced } from "../discovery/analysis/analysis_runner.ts";
import { MemoryOrchestratorObjects, type OrchObject } from "../discovery/analysis/analysis_input.ts";
import { storeAnalysisInput } from "../discovery/analysis/store_analysis_input.ts";
import { sidecarAnnotationProblem } from "../discovery/inject/annotation_validation.ts";
import { INITIAL_KNOBS, meshService, serviceDocuments } from "./mesh_fixture.ts";
import { summarize } from "./latency_stats.ts";

const { values } = parseArgs({
  options: { services: { type: "string", default: "1000" }, runs: { type: "string", default: "30" } },
});
const services = Number(values.services);
const runs = Number(values.runs);

const store = new MemoryConfigStore({ logger: silentLogger });
const orchestrator = new MemoryOrchestratorObjects();
const namespaces = new Set<string>();
for (let i = 0; i < services; i++) {
  const service = meshService(i);
  for (const doc of serviceDocuments(service, INITIAL_KNOBS)) {
    const { resource } = parseResource(doc);
    if (!resource) throw new Error(`Fixture document refused: ${JSON.stringify(doc).slice(0, 80)}`);
    store.apply(resource);
  }
  const { namespace, name } = service;
  namespaces.add(namespace);
  const labels = { app: name };
  orchestrator.add({
    kind: "Service",
    metadata: { name, namespace },
    spec: { selector: labels, ports: [{ name: "grpc", port: 8080, protocol: "TCP", targetPort: 8080 }] },
  });
  const podSpec = {
    containers: [{ name: name }, { name: "mesh-proxy", image: "docker.io/mesh/proxyv2:1.9" }],
  };
  orchestrator.add({
    kind: "Deployment",
    metadata: { name, namespace },
    spec: { template: { metadata: { labels }, spec: podSpec } },
  });
  for (let k = 0; k < 3; k++) {
    orchestrator.add({ kind: "Pod", metadata: { name: `${name}-${k}`, namespace, labels }, spec: podSpec });
  }
}
for (const name of namespaces) {
  orchestrator.add(
    { kind: "Namespace", metadata: { name, labels: { "mesh-injection": "enabled" } } } as OrchObject,
  );
}

const analyzers = allAnalyzers({ validateAnnotation: sidecarAnnotationProblem });
const input = (withOrchestrator: boolean) =>
  storeAnalysisInput({
    store,
    rootNamespace: () => "mesh-system",
    systemNamespace: "mesh-system",
    meshNetworks: () => ({ networks: {} }),
    ...(withOrchestrator ? { orchestrator } : {}),
  });

/** A LoopSlices that also records how long each slice held the loop. */
class MeasuredSlices extends LoopSlices {
  longest = 0;
  #since = performance.now();
  override async pause(): Promise<void> {
    const before = performance.now();
    await super.pause();
    if (performance.now() - before > 0.5) {
      this.longest = Math.max(this.longest, before - this.#since);
      this.#since = performance.now();
    }
  }
}

async function measure(label: string, withOrchestrator: boolean): Promise<void> {
  const chosen = runnableAnalyzers(analyzers, withOrchestrator);
  let messages = 0;
  for (let i = 0; i < 3; i++) messages = analyzeNow(input(withOrchestrator), chosen).length;
  const whole: number[] = [];
  const cpu: number[] = [];
  const sliced: number[] = [];
  let longest = 0;
  for (let i = 0; i < runs; i++) {
    let started = performance.now();
    const cpuBefore = cpuUsage();
    analyzeNow(input(withOrchestrator), chosen);
    whole.push(performance.now() - started);
    const used = cpuUsage(cpuBefore);
    cpu.push((used.user + used.system) / 1000);
    const slices = new MeasuredSlices();
    started = performance.now();
    await analyzeSliced(input(withOrchestrator), chosen, slices);
    sliced.push(performance.now() - started);
    longest = Math.max(longest, slices.longest);
  }
  const w = summarize(whole);
  const s = summarize(sliced);
  const c = summarize(cpu);
  console.log(
    `${label} (${chosen.length} analyzers, ${messages} messages): in one go p50 ${w.p50} ms, p99 ${w.p99} ms, ` +
      `max ${w.max} ms (CPU p50 ${c.p50} ms, p99 ${c.p99} ms); sliced p50 ${s.p50} ms, p99 ${s.p99} ms, ` +
      `max ${s.max} ms; longest slice ${longest.toFixed(1)} ms (${runs} runs)`,
  );
}

console.log(`${services} services, ${store.size} resources, Deno ${Deno.version.deno}`);
await measure("file mode", false);
await measure("with orchestrator objects", true);
