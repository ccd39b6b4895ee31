/**
 * Envoy sidecars end to end: the real `mesh-discovery discovery` serves the example mesh to an ADS client that
 * presents itself as an Envoy sidecar (no `GENERATOR` metadata). It must receive clusters, endpoints, listeners
 * and routes that reference each other consistently, as Envoy requires before it uses any of them.
 */
import assert from "node:assert/strict";
import { TYPE_URL } from "../proto/type_urls.ts";
import {
  plainResource as plain,
  TestAdsClient,
  type TestAdsClient as Client,
  testNode,
} from "../discovery/xds/_test_ads_client.ts";
import { discoveryAddresses, discoveryArgs, startProgram } from "./helpers/programs.ts";

type Obj = Record<string, unknown>;

async function fetchType(client: Client, node: Obj, typeUrl: string, names: string[] = []) {
  client.send({ node, type_url: typeUrl, resource_names: names });
  for (;;) {
    const response = await client.next(20_000);
    // Acknowledge every response so the server never waits on us.
    client.send({
      node,
      type_url: response.typeUrl,
      version_info: response.version,
      response_nonce: response.nonce,
      resource_names: names,
    });
    if (response.typeUrl === typeUrl) return response;
  }
}

Deno.test("An Envoy sidecar gets clusters, endpoints, listeners and routes that reference each other", async () => {
  const addresses = discoveryAddresses();
  const server = startProgram(
    "mesh-discovery",
    discoveryArgs(addresses, [
      "--registries",
      "Mock",
      "--configDir",
      "examples/config",
      "--meshConfig",
      "examples/mesh.yaml",
      "--log_as_json",
    ]),
  );
  let client: Client | undefined;
  try {
    await server.waitFor(/"msg":"discovery server started"/);
    client = TestAdsClient.sotw(Number(addresses.grpcAddr.split(":").at(-1)));
    const node = testNode("sidecar~10.9.9.9~app.example~example.svc.cluster.local", { NAMESPACE: "example" });

    const cds = await fetchType(client, node, TYPE_URL.cluster);
    const clusters = new Map(cds.resources.map((r) => [r.name, r.fields]));
    assert.ok(
      clusters.has("PassthroughCluster") && clusters.has("BlackHoleCluster"),
      [...clusters.keys()].join(),
    );
    const edsNames = [...clusters.values()].filter((c) => c.type === "EDS").map((c) => String(c.name));
    assert.ok(edsNames.length > 0, "the example mesh has EDS clusters");

    const eds = await fetchType(client, node, TYPE_URL.endpoint, edsNames);
    assert.deepEqual(
      new Set(eds.resources.map((r) => r.name)),
      new Set(edsNames),
      "every EDS cluster has endpoints",
    );

    const lds = await fetchType(client, node, TYPE_URL.listener);
    const listeners = lds.resources.map((r) => r.name);
    assert.ok(
      listeners.includes("virtualOutbound") && listeners.includes("virtualInbound"),
      listeners.join(),
    );
    const routeNames = [
      ...JSON.stringify(lds.resources.map(plain)).matchAll(/"route_config_name":"([^"]+)"/g),
    ]
      .map((m) => m[1]);
    assert.ok(routeNames.length > 0, "HTTP listeners take routes from RDS");

    const rds = await fetchType(client, node, TYPE_URL.route, routeNames);
    assert.deepEqual(
      new Set(rds.resources.map((r) => r.name)),
      new Set(routeNames),
      "every named route is served",
    );
    const referenced = JSON.stringify([...lds.resources, ...rds.resources].map(plain))
      .matchAll(/"cluster":"([^"]+)"/g);
    for (const [, cluster] of referenced) {
      assert.ok(clusters.has(cluster), `${cluster} is referenced by a listener or route and served by CDS`);
    }
  } finally {
    client?.close();
    await server.stop();
  }
});
