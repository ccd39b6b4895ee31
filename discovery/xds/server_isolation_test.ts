/**
 * Two discovery servers in one process, with different configs, share no cached state: what each memoises
 * belongs to its own server or to its own snapshots, so one's work never shows in (or is served from) the
 * other's tables.
 */
import "reflect-metadata";
import assert from "node:assert/strict";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { GeneratorRegistry, registerEnvoyGenerators } from "../generate/mod.ts";
import type { PushContext } from "../push/push_context.ts";
import { ordinaryMesh, serviceEntry, world } from "../push/_test_support.ts";
import { AdsServer } from "./ads_server.ts";
import { startXdsServer } from "./xds_grpc_server.ts";
import { DEFAULT_XDS_SETTINGS } from "./xds_settings.ts";
import { TestAdsClient, testNode } from "./_test_ads_client.ts";

const KEEPALIVE = { intervalMs: 30_000, timeoutMs: 10_000, maxConnectionAgeNs: 9_223_372_036_854_775_807n };
const SIDECAR = "sidecar~10.0.0.1~app.a~a.svc.cluster.local";

async function startServer(push: PushContext) {
  const logger = new RecordingLogger();
  const service = new AdsServer<PushContext>({
    generators: registerEnvoyGenerators(new GeneratorRegistry<PushContext>()),
    settings: DEFAULT_XDS_SETTINGS,
    logger,
    metrics: new Metrics("discovery", { version: "test", tag: "test" }),
    initialPush: push,
  });
  const server = await startXdsServer({
    addr: { hostname: "127.0.0.1", port: 0 },
    service,
    keepalive: KEEPALIVE,
    logger,
  });
  return { service, server };
}

/** Asks for every cluster and the routes of port 80 on one stream, and waits for both answers. */
async function fetchClustersAndRoutes(port: number): Promise<void> {
  const client = TestAdsClient.sotw(port);
  try {
    client.send({ node: testNode(SIDECAR), type_url: TYPE_URL.cluster });
    await client.next();
    client.send({ node: testNode(SIDECAR), type_url: TYPE_URL.route, resource_names: ["80"] });
    await client.next();
  } finally {
    client.close();
  }
}

Deno.test("Two discovery servers in one process share no cached state", async () => {
  const small = world();
  small.apply(serviceEntry("a", "only", "only.a.svc.cluster.local"));
  const large = world();
  large.apply(...ordinaryMesh());
  const one = await startServer(small.push());
  const other = await startServer(large.push());
  try {
    await fetchClustersAndRoutes(one.server.port);
    const oneAfterItsOwn = one.service.memoStats().derived;
    assert.ok(oneAfterItsOwn["cds.plannedResources"] > 0, "the first server planned its clusters");
    assert.equal(
      other.service.memoStats().derived["cds.plannedResources"],
      undefined,
      "nothing shows elsewhere",
    );
    assert.equal(other.service.memoStats().derived.connections, 0);

    await fetchClustersAndRoutes(other.server.port);
    assert.deepEqual(
      one.service.memoStats().derived,
      oneAfterItsOwn,
      "the other server's work is not counted here",
    );
    const otherStats = other.service.memoStats().derived;
    assert.ok(
      otherStats["cds.plannedResources"] > oneAfterItsOwn["cds.plannedResources"],
      "the larger config planned more clusters, in its own tables",
    );
    assert.equal(otherStats.connections, 1, "connections are numbered per server");
    assert.deepEqual(
      [oneAfterItsOwn.nonces, otherStats.nonces],
      [2, 2],
      "each server numbers its own two responses",
    );
  } finally {
    await one.server.close();
    await other.server.close();
    one.service.close();
    other.service.close();
  }
});
