import assert from "node:assert/strict";
import { loadConfigText } from "../discovery/config/config_file_load.ts";
import { endpointAddress, INITIAL_KNOBS, meshService, serviceYaml } from "./mesh_fixture.ts";

Deno.test("every benchmark service file is valid config: a ServiceEntry, three WorkloadEntries, a VS and a DR", () => {
  for (const knobs of [INITIAL_KNOBS, { v1Weight: 50, lb: "LEAST_CONN", firstEndpointWeight: 2 } as const]) {
    const service = meshService(123);
    const load = loadConfigText(service.file, serviceYaml(service, knobs), "default");
    assert.deepEqual(load.rejections, []);
    assert.deepEqual(load.documents.map((d) => d.resource.gvk.kind), [
      "ServiceEntry",
      "WorkloadEntry",
      "WorkloadEntry",
      "WorkloadEntry",
      "VirtualService",
      "DestinationRule",
    ]);
  }
});

Deno.test("services are ten per namespace with unique endpoint addresses", () => {
  assert.equal(meshService(9).namespace, meshService(0).namespace);
  assert.notEqual(meshService(10).namespace, meshService(9).namespace);
  const addresses = new Set<string>();
  for (let i = 0; i < 5000; i++) for (let k = 0; k < 3; k++) addresses.add(endpointAddress(i, k));
  assert.equal(addresses.size, 15000);
});
