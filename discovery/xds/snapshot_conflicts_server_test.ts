import "reflect-metadata";
import assert from "node:assert/strict";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { GeneratorRegistry, registerEnvoyGenerators } from "../generate/mod.ts";
import type { PushContext } from "../push/push_context.ts";
import { configKey, pushRequest } from "../push/push_request.ts";
import { serviceEntry, world } from "../push/_test_support.ts";
import { AdsServer } from "./ads_server.ts";
import { startXdsServer } from "./xds_grpc_server.ts";
import { DEFAULT_XDS_SETTINGS } from "./xds_settings.ts";
import { TestAdsClient, testNode } from "./_test_ads_client.ts";

const KEEPALIVE = { intervalMs: 30_000, timeoutMs: 10_000, maxConnectionAgeNs: 9_223_372_036_854_775_807n };

/** Asks for the listeners of a client sidecar (at no endpoint address) and waits for them. */
async function fetchListeners(port: number, id: string): Promise<void> {
  const client = TestAdsClient.sotw(port);
  try {
    client.send({ node: testNode(id), type_url: TYPE_URL.listener });
    await client.next();
  } finally {
    client.close();
  }
}

Deno.test("The xDS server counts each proxy's listener conflicts beside the snapshot, which stays frozen", async () => {
  const w = world();
  w.apply(serviceEntry("a", "only", "only.a.svc.cluster.local"));
  const metrics = new Metrics("discovery", { version: "test", tag: "test" });
  const logger = new RecordingLogger();
  const push = w.push({ version: "v1" });
  const service = new AdsServer<PushContext>({
    generators: registerEnvoyGenerators(new GeneratorRegistry<PushContext>()),
    settings: DEFAULT_XDS_SETTINGS,
    logger,
    metrics,
    initialPush: push,
  });
  const server = await startXdsServer({
    addr: { hostname: "127.0.0.1", port: 0 },
    service,
    keepalive: KEEPALIVE,
    logger,
  });
  const ids = ["sidecar~10.9.0.1~one.a~a.svc.cluster.local", "sidecar~10.9.0.2~two.a~a.svc.cluster.local"];
  try {
    // Shape-mates: the second gets the first one's listeners, and is counted all the same.
    for (const id of ids) await fetchListeners(server.port, id);
    assert.deepEqual(service.conflicts.keys("discovery_no_ip"), ["one.a", "two.a"]);
    assert.match(await metrics.render(), /^discovery_no_ip 2$/m);
    assert.ok(Object.isFrozen(push));
    service.push(
      pushRequest(true, "config", [configKey("VirtualService", "a", "vs")], 0),
      w.push({ version: "v2" }),
    );
    assert.deepEqual(
      service.conflicts.keys("discovery_no_ip"),
      [],
      "a new snapshot's listeners count afresh",
    );
  } finally {
    await server.close();
    service.close();
  }
});
