/**
 * EnvoyFilters end to end: the real `mesh-discovery discovery` reads an EnvoyFilter from its config directory
 * and a test ADS client presenting itself as an Envoy sidecar sees the HTTP filter it inserts before the router.
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

const ENVOY_FILTER = `apiVersion: networking.mesh.io/v1alpha3
kind: EnvoyFilter
metadata:
  name: cors
  namespace: example
spec:
  configPatches:
    - applyTo: HTTP_FILTER
      match:
        context: SIDECAR_OUTBOUND
        listener:
          portNumber: 9080
          filterChain:
            filter:
              name: envoy.filters.network.http_connection_manager
              subFilter:
                name: envoy.filters.http.router
      patch:
        operation: INSERT_BEFORE
        value:
          name: envoy.filters.http.cors
          typed_config:
            "@type": type.googleapis.com/envoy.extensions.filters.http.cors.v3.Cors
`;

Deno.test("An EnvoyFilter in the config directory inserts its HTTP filter into a sidecar's listener", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envoy_filter_e2e_" });
  await Deno.writeTextFile(
    `${dir}/ratings.yaml`,
    await Deno.readTextFile("examples/config/services/ratings.yaml"),
  );
  await Deno.writeTextFile(`${dir}/envoy-filter.yaml`, ENVOY_FILTER);
  const addresses = discoveryAddresses();
  const server = startProgram(
    "mesh-discovery",
    discoveryArgs(addresses, [
      "--registries",
      "Mock",
      "--configDir",
      dir,
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
    client.send({ node, type_url: TYPE_URL.listener, resource_names: [] });
    const response = await client.next(20_000);
    assert.equal(response.typeUrl, TYPE_URL.listener);
    const listener = response.resources.map(plain).find((l) => (l as Obj).name === "0.0.0.0_9080") as Obj;
    assert.ok(listener, response.resources.map((r) => r.name).join());
    const filters = [...JSON.stringify(listener).matchAll(/"name":"(envoy\.filters\.http\.[a-z_]+)"/g)].map((
      m,
    ) => m[1]);
    assert.deepEqual(filters.slice(-2), ["envoy.filters.http.cors", "envoy.filters.http.router"]);
  } finally {
    client?.close();
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
