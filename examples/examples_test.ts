import assert from "node:assert/strict";
import { parseMeshConfig } from "../shared/config/mesh/parse_mesh_config.ts";
import { parseMeshNetworks } from "../shared/config/mesh/mesh_networks.ts";
import { Metrics } from "../shared/metrics/metrics.ts";
import { FileConfigSource } from "../discovery/config/file_config_source.ts";
import { MemoryConfigStore } from "../discovery/config/memory_config_store.ts";
import { RecordingLogger } from "../discovery/config/_test_support.ts";

const here = new URL(".", import.meta.url).pathname.replace(/\/$/, "");

Deno.test("examples/config loads without a rejection or warning", async (t) => {
  const store = new MemoryConfigStore();
  const logger = new RecordingLogger();
  const metrics = new Metrics("discovery", { version: "test", tag: "test" });
  const source = new FileConfigSource({
    dir: `${here}/config`,
    store,
    defaultNamespace: "default",
    logger,
    metrics,
  });
  await source.start();
  await source.stop();

  await t.step("nothing is rejected, warned about or counted", async () => {
    assert.deepEqual(source.rejected(), []);
    assert.deepEqual(source.warnings(), []);
    assert.deepEqual(logger.lines.filter((l) => l.level !== "info" && l.level !== "debug"), []);
    assert.deepEqual((await metrics.counter("discovery_total_rejected_configs").get()).values, []);
  });

  await t.step("every kind of the example mesh is there, in the namespace example", () => {
    const counts: Record<string, number> = {};
    for (const r of store.all()) {
      counts[r.gvk.kind] = (counts[r.gvk.kind] ?? 0) + 1;
      assert.equal(r.meta.namespace, "example", `${r.gvk.kind} ${r.meta.name}`);
    }
    assert.deepEqual(counts, {
      DestinationRule: 4,
      Gateway: 1,
      PeerAuthentication: 1,
      ServiceEntry: 5,
      Sidecar: 1,
      VirtualService: 5,
      WorkloadEntry: 9,
    });
  });

  await t.step("reviews splits 80/10/10 across three subsets its destination rule defines", () => {
    const vs = store.get("VirtualService", "example", "reviews")!.spec as {
      http: { route: { destination: { subset: string }; weight?: number }[] }[];
    };
    const weighted = vs.http[1].route.map((r) => [r.destination.subset, r.weight]);
    assert.deepEqual(weighted, [["v1", 80], ["v2", 10], ["v3", 10]]);
    const dr = store.get("DestinationRule", "example", "reviews")!.spec as { subsets: { name: string }[] };
    assert.deepEqual(dr.subsets.map((s) => s.name), ["v1", "v2", "v3"]);
  });

  await t.step("the gRPC service greeter is declared with a GRPC port", () => {
    const se = store.get("ServiceEntry", "example", "greeter")!.spec as {
      hosts: string[];
      ports: { protocol: string }[];
    };
    assert.deepEqual(se.hosts, ["greeter.example.svc.cluster.local"]);
    assert.equal(se.ports[0].protocol, "GRPC");
  });
});

Deno.test("examples/mesh.yaml and examples/meshNetworks.yaml are valid", async () => {
  const mesh = parseMeshConfig(await Deno.readTextFile(`${here}/mesh.yaml`), "examples/mesh.yaml");
  assert.deepEqual(mesh.warnings, []);
  assert.equal(mesh.config.accessLogFile, "/dev/stdout");
  assert.equal(mesh.config.defaultConfig.proxyMetadata.MESH_META_DNS_CAPTURE, "true");
  assert.equal(mesh.config.defaultConfig.drainDuration, 45_000_000_000n);
  const networks = parseMeshNetworks(
    await Deno.readTextFile(`${here}/meshNetworks.yaml`),
    "examples/meshNetworks.yaml",
  );
  assert.deepEqual(Object.keys(networks.networks.networks).sort(), ["network1", "network2"]);
});
