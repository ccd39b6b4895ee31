/**
 * The real `mesh-discovery` on an orchestrator that serves only some of the mesh's API groups: every existing
 * Istio cluster has Istio's groups and not ours. Readiness waits only for the kinds the orchestrator serves.
 */
import assert from "node:assert/strict";
import { OrchApiServer } from "../shared/testing/orch_api_server.ts";
import { discoveryAddresses, discoveryArgs, startProgram, untilReady } from "./helpers/programs.ts";

for (
  const [installed, missing] of [
    ["Istio's", ["networking.mesh.io", "security.mesh.io"]],
    ["our", ["networking.istio.io", "security.istio.io"]],
  ] as const
) {
  Deno.test(`With only ${installed} API groups installed mesh-discovery becomes ready and serves them`, async () => {
    const api = OrchApiServer.start({ absentGroups: missing });
    const group = missing[0] === "networking.mesh.io" ? "networking.istio.io" : "networking.mesh.io";
    api.apply({
      apiVersion: `${group}/v1beta1`,
      kind: "VirtualService",
      metadata: { name: "ratings", namespace: "shop" },
      spec: { hosts: ["ratings"], http: [{ route: [{ destination: { host: "ratings" } }] }] },
    });
    const dir = await Deno.makeTempDir({ prefix: "mesh_orch_crds_e2e_" });
    await Deno.writeTextFile(`${dir}/kubeconfig`, api.kubeconfig());
    const addresses = discoveryAddresses();
    const server = startProgram(
      "mesh-discovery",
      discoveryArgs(addresses, ["--registries", "Orchestrator", "--orchconfig", `${dir}/kubeconfig`]),
    );
    try {
      await server.waitFor(/orchestrator does not serve this kind/);
      await untilReady(addresses.httpAddr, 30_000);
      const configz = await fetch(`http://${addresses.httpAddr}/debug/configz`);
      assert.match(await configz.text(), /"name":\s*"ratings"/);
      assert.doesNotMatch(server.stderr + server.stdout, /list or watch failed/);
    } finally {
      await server.stop();
      await api.close();
      await Deno.remove(dir, { recursive: true });
    }
  });
}
