import assert from "node:assert/strict";
import { MeshConfigError } from "./mesh_config_error.ts";
import { defaultMeshNetworks, parseMeshNetworks } from "./mesh_networks.ts";

function issuesOf(text: string): string[] {
  try {
    parseMeshNetworks(text, "nets.yaml");
  } catch (error) {
    assert.ok(error instanceof MeshConfigError, String(error));
    return [...error.issues];
  }
  assert.fail(`expected ${JSON.stringify(text)} to be rejected`);
}

Deno.test("parseMeshNetworks reads networks with endpoints and gateways", async (t) => {
  await t.step("a full file", () => {
    const { networks } = parseMeshNetworks(
      `networks:
  network1:
    endpoints:
    - fromRegistry: Orchestrator
    - fromCidr: 10.0.0.0/16
    gateways:
    - address: 192.0.2.1
      port: 15443
      locality: us-east1
  network2:
    endpoints:
    - fromCidr: "2001:db8::/32"
    gateways:
    - registryServiceName: eastwest.mesh-system.svc.cluster.local
      port: 443
  empty: {}
`,
      "nets.yaml",
    );
    assert.deepEqual(networks.networks.network1, {
      endpoints: [{ fromRegistry: "Orchestrator" }, { fromCidr: "10.0.0.0/16" }],
      gateways: [{ address: "192.0.2.1", port: 15443, locality: "us-east1" }],
    });
    assert.equal(
      networks.networks.network2.gateways[0].registryServiceName,
      "eastwest.mesh-system.svc.cluster.local",
    );
    assert.deepEqual(networks.networks.empty, { endpoints: [], gateways: [] });
  });

  await t.step("an empty file means no networks", () => {
    assert.deepEqual(parseMeshNetworks("", "nets.yaml").networks, defaultMeshNetworks());
  });
});

Deno.test("parseMeshNetworks rejects invalid networks with field paths and lines", () => {
  assert.deepEqual(issuesOf("networks:\n  n1:\n    endpoints:\n    - fromCidr: 10.0.0.0/33\n"), [
    'nets.yaml:4: networks.n1.endpoints[0].fromCidr: "10.0.0.0/33" is not a valid CIDR block',
  ]);
  assert.match(
    issuesOf("networks:\n  n1:\n    endpoints:\n    - {fromCidr: 10.0.0.0/8, fromRegistry: r}\n")[0],
    /^nets\.yaml:4: networks\.n1\.endpoints\[0\]: only one of fromCidr, fromRegistry may be set/,
  );
  assert.match(
    issuesOf("networks:\n  n1:\n    endpoints:\n    - {}\n")[0],
    /one of fromCidr or fromRegistry is required/,
  );
  assert.match(
    issuesOf("networks:\n  n1:\n    endpoints:\n    - fromRegistry: bad_name\n")[0],
    /invalid registry name "bad_name"/,
  );
  assert.match(
    issuesOf("networks:\n  n1:\n    gateways:\n    - address: 1.2.3.4\n")[0],
    /^nets\.yaml:4: networks\.n1\.gateways\[0\]\.port: port is required/,
  );
  assert.match(
    issuesOf("networks:\n  n1:\n    gateways:\n    - {address: 1.2.3.4, port: 0}\n")[0],
    /port number 0 must be in the range/,
  );
  assert.match(
    issuesOf('networks:\n  n1:\n    gateways:\n    - {address: "not valid!", port: 1}\n')[0],
    /is not a valid IP address or DNS name/,
  );
  assert.match(
    issuesOf("networks:\n  n1:\n    gatways: []\n")[0],
    /^nets\.yaml:3: networks\.n1\.gatways: unknown field "gatways"; expected one of endpoints, gateways/,
  );
  assert.match(issuesOf("netwerks: {}\n")[0], /^nets\.yaml:1: netwerks: unknown field/);
});
