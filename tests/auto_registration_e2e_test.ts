/**
 * WorkloadEntry auto-registration end to end: the real `mesh-discovery` registers a proxy of a WorkloadGroup
 * only when its caller proved, on the secure port, an identity of the group's namespace and service account;
 * a node's metadata on the plaintext port registers nothing.
 */
import assert from "node:assert/strict";
import { TYPE_URL } from "../proto/type_urls.ts";
import { makePluggedInCa, writePluggedInCa } from "../shared/testing/plugged_in_ca.ts";
import { credentialsFrom } from "./helpers/gateway_fixture.ts";
import { TestAdsClient, testNode } from "../discovery/xds/_test_ads_client.ts";
import { discoveryAddresses, discoveryArgs, startProgram } from "./helpers/programs.ts";

const DAY = 24 * 3_600_000;

const WORKLOAD_GROUP = `apiVersion: networking.mesh.io/v1alpha3
kind: WorkloadGroup
metadata:
  name: reviews
  namespace: vm
spec:
  template:
    serviceAccount: reviews
    ports:
      http: 8080
`;

/** Opens an ADS stream as the VM at `ip` of group `reviews` and waits for its first response. */
async function connectVm(client: TestAdsClient, ip: string): Promise<void> {
  const node = testNode(`sidecar~${ip}~vm-1.vm~vm.svc.cluster.local`, {
    NAMESPACE: "vm",
    AUTO_REGISTER_GROUP: "reviews",
  });
  client.send({ node, type_url: TYPE_URL.cluster, resource_names: [] });
  await client.next(20_000);
}

Deno.test("Auto-registration writes an entry only for a proxy whose caller proved the group's identity", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "mesh_autoreg_e2e_" });
  const configDir = `${dir}/config`;
  await Deno.mkdir(configDir);
  await Deno.writeTextFile(`${configDir}/group.yaml`, WORKLOAD_GROUP);
  const plugged = await makePluggedInCa(30 * DAY);
  await writePluggedInCa(plugged, dir);
  const addresses = discoveryAddresses();
  const server = startProgram(
    "mesh-discovery",
    discoveryArgs(addresses, ["--registries", "Mock", "--configDir", configDir, "--log_as_json"]),
    { ROOT_CA_DIR: dir, DISCOVERY_ENABLE_WORKLOAD_ENTRY_AUTOREGISTRATION: "true" },
  );
  const securePort = Number(addresses.secureGRPCAddr.split(":").at(-1));
  const plainPort = Number(addresses.grpcAddr.split(":").at(-1));
  const clients: TestAdsClient[] = [];
  const entries = async () => {
    const body = await (await fetch(`http://${addresses.httpAddr}/debug/configz`)).json();
    return (body.resources as { gvk: { kind: string }; meta: { name: string } }[])
      .filter((r) => r.gvk.kind === "WorkloadEntry").map((r) => r.meta.name);
  };
  try {
    await server.waitFor(/"msg":"discovery server started"/);

    await t.step("on the plaintext port, the node's claim alone is refused and logged", async () => {
      const client = TestAdsClient.sotw(plainPort);
      clients.push(client);
      await connectVm(client, "10.1.0.7");
      const [line] = await server.waitFor(/\{[^\n]*"msg":"auto-registration refused"[^\n]*\}/);
      assert.equal(JSON.parse(line).entry, "vm/reviews-10.1.0.7");
      assert.match(JSON.parse(line).reason, /proved no identity/);
      assert.deepEqual(await entries(), []);
    });

    await t.step("another service account of the namespace is refused too", async () => {
      const client = TestAdsClient.sotwTls(
        securePort,
        await credentialsFrom(plugged, "spiffe://cluster.local/ns/vm/sa/other"),
        "localhost",
      );
      clients.push(client);
      await connectVm(client, "10.1.0.8");
      await server.waitFor(
        /"msg":"auto-registration refused"[^\n]*"entry":"vm\/reviews-10.1.0.8"[^\n]*service account/,
      );
      assert.deepEqual(await entries(), []);
    });

    await t.step("the group's identity on the secure port registers its address", async () => {
      const client = TestAdsClient.sotwTls(
        securePort,
        await credentialsFrom(plugged, "spiffe://cluster.local/ns/vm/sa/reviews"),
        "localhost",
      );
      clients.push(client);
      await connectVm(client, "10.1.0.9");
      await server.waitFor(/"msg":"auto-registered WorkloadEntry"[^\n]*"entry":"vm\/reviews-10.1.0.9"/);
      assert.deepEqual(await entries(), ["reviews-10.1.0.9"]);
    });
  } finally {
    for (const client of clients) client.close();
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
