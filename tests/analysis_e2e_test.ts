// File mode with DISCOVERY_ENABLE_ANALYSIS: the real server over a config directory reports the reference's
// analysis messages in the debug interface, and clears them once the files are fixed.
import assert from "node:assert/strict";
import { discoveryAddresses, discoveryArgs, startProgram } from "./helpers/programs.ts";
import { waitFor } from "../shared/testing/wait_for.ts";

const VIRTUAL_SERVICE = `
apiVersion: networking.mesh.io/v1beta1
kind: VirtualService
metadata:
  name: shop
  namespace: default
spec:
  hosts: [shop.example.com]
  gateways: [shop-gateway]
  http:
  - route:
    - destination:
        host: shop.default.svc.cluster.local
        subset: v2
`;

const destinationRule = (subsets: string[]) => `
apiVersion: networking.mesh.io/v1beta1
kind: DestinationRule
metadata:
  name: shop
  namespace: default
spec:
  host: shop.default.svc.cluster.local
  subsets:
${subsets.map((s) => `  - name: ${s}\n    labels: {version: ${s}}`).join("\n")}
`;

const GATEWAY = `
apiVersion: networking.mesh.io/v1beta1
kind: Gateway
metadata:
  name: shop-gateway
  namespace: default
spec:
  selector: {mesh: ingressgateway}
  servers:
  - port: {number: 80, name: http, protocol: HTTP}
    hosts: [shop.example.com]
`;

interface Message {
  code: string;
  text: string;
}

Deno.test("with DISCOVERY_ENABLE_ANALYSIS, a missing gateway and an unknown subset show in /debug until fixed", async () => {
  const dir = await Deno.makeTempDir({ prefix: "analysis_e2e_" });
  await Deno.writeTextFile(`${dir}/vs.yaml`, VIRTUAL_SERVICE);
  await Deno.writeTextFile(`${dir}/dr.yaml`, destinationRule(["v1"]));
  const addresses = discoveryAddresses();
  const server = startProgram(
    "mesh-discovery",
    discoveryArgs(addresses, ["--registries", "Mock", "--configDir", dir, "--log_as_json"]),
    { DISCOVERY_ENABLE_ANALYSIS: "true" },
  );
  const debug = async (path: string) => await (await fetch(`http://${addresses.httpAddr}${path}`)).json();
  const vsMessages = async (): Promise<Message[] | undefined> =>
    (await debug("/debug/analyzez")).resources["VirtualService/default/shop"];
  try {
    await server.waitFor(/"msg":"discovery server started"/);
    await waitFor(
      async () => (await vsMessages()) !== undefined,
      "analysis messages of the VirtualService",
      30_000,
      100,
    );
    const messages = (await vsMessages())!;
    assert.deepEqual(messages.map((m) => `${m.code} ${m.text}`).sort(), [
      'IST0101 Referenced gateway not found: "shop-gateway"',
      'IST0101 Referenced host+subset in destinationrule not found: "shop.default.svc.cluster.local+v2"',
      "IST0132 one or more host [shop.example.com] defined in VirtualService default/shop not found in " +
      "Gateway default/shop-gateway.",
    ]);
    const configz = await debug("/debug/configz");
    assert.deepEqual(
      configz.analysis["VirtualService/default/shop"],
      messages,
      "configz shows them per resource",
    );
    const analyzez = await debug("/debug/analyzez");
    assert.equal(analyzez.enabled, true);
    assert.ok(!analyzez.analyzers.includes("injection.Analyzer"), "file mode runs no orchestrator analyzer");

    await Deno.writeTextFile(`${dir}/gateway.yaml`, GATEWAY);
    await Deno.writeTextFile(`${dir}/dr.yaml`, destinationRule(["v1", "v2"]));
    await waitFor(async () => (await vsMessages()) === undefined, "the messages to clear", 30_000, 100);
    assert.deepEqual((await debug("/debug/configz")).analysis, {});
  } finally {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
