/**
 * A gateway end to end through the orchestrator: the real `mesh-discovery` reads a Service, a Gateway, a
 * VirtualService bound to it and a TLS Secret from the test API server; a `router` proxy gets a listener per
 * server port, the routes of its servers, and the credential over SDS, all consistent with each other. The
 * credential goes only to a stream on the secure port that proved an identity in the gateway's namespace.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { TYPE_URL } from "../proto/type_urls.ts";
import { makePluggedInCa } from "../shared/testing/plugged_in_ca.ts";
import { OrchApiServer } from "../shared/testing/orch_api_server.ts";
import { TestAdsClient, type TestAdsClient as Client, testNode } from "../discovery/xds/_test_ads_client.ts";
import {
  discoveryAddresses,
  discoveryArgs,
  orchestratorFlags,
  startProgram,
  untilReady,
} from "./helpers/programs.ts";
import {
  credentialsAs,
  fetchUntil,
  MUTUAL_GATEWAY_YAML,
  writeCredentialFolder,
} from "./helpers/gateway_fixture.ts";

type Obj = Record<string, unknown>;
const DAY = 24 * 3_600_000;

/** The ingress gateway of namespace `edge`. */
const INGRESS_NODE = testNode("router~10.8.0.1~ingress-1.edge~edge.svc.cluster.local", {
  NAMESPACE: "edge",
  LABELS: { app: "ingress" },
});

Deno.test("A gateway gets listeners, routes and its TLS credential from orchestrator resources", async () => {
  const credential = await makePluggedInCa(DAY);
  const api = OrchApiServer.start();
  const dir = await Deno.makeTempDir({ prefix: "mesh_gateway_e2e_" });
  api.apply({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "shop", namespace: "edge" },
    spec: { clusterIP: "10.96.0.20", ports: [{ name: "http", port: 8080 }] },
  });
  api.apply({
    apiVersion: "networking.mesh.io/v1beta1",
    kind: "Gateway",
    metadata: { name: "public", namespace: "edge" },
    spec: {
      selector: { app: "ingress" },
      servers: [
        {
          port: { number: 8443, name: "https", protocol: "HTTPS" },
          hosts: ["shop.example.com"],
          name: "shop",
          tls: { mode: "SIMPLE", credentialName: "shop-cert" },
        },
      ],
    },
  });
  api.apply({
    apiVersion: "networking.mesh.io/v1beta1",
    kind: "VirtualService",
    metadata: { name: "shop", namespace: "edge" },
    spec: {
      hosts: ["shop.example.com"],
      gateways: ["public"],
      http: [{ route: [{ destination: { host: "shop" } }] }],
    },
  });
  api.apply({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "shop-cert", namespace: "edge" },
    data: {
      "tls.crt": Buffer.from(credential.files["ca-cert.pem"]).toString("base64"),
      "tls.key": Buffer.from(credential.files["ca-key.pem"]).toString("base64"),
    },
  });
  await Deno.writeTextFile(`${dir}/kubeconfig`, api.kubeconfig());
  const credentials = await credentialsAs("spiffe://cluster.local/ns/edge/sa/ingress", dir);
  const addresses = discoveryAddresses();
  const server = startProgram(
    "mesh-discovery",
    discoveryArgs(addresses, [
      ...orchestratorFlags(`${dir}/kubeconfig`),
      "--log_as_json",
    ]),
    { ROOT_CA_DIR: dir, XDS_AUTH: "true" },
  );
  let plaintext: Client | undefined;
  let client: Client | undefined;
  try {
    // Like a real proxy, the clients come once the server is ready: until every source synced it refuses streams.
    await untilReady(addresses.httpAddr);
    plaintext = TestAdsClient.sotw(Number(addresses.grpcAddr.split(":").at(-1)));
    client = TestAdsClient.sotwTls(
      Number(addresses.secureGRPCAddr.split(":").at(-1)),
      credentials,
      "localhost",
    );
    const node = INGRESS_NODE;
    const fetchType = (typeUrl: string, names: string[], until: (r: Obj[]) => boolean, stream = client!) =>
      fetchUntil(stream, node, typeUrl, names, until);
    const listeners = await fetchType(TYPE_URL.listener, [], (r) => r.some((l) => l.name === "0.0.0.0_8443"));
    const text = JSON.stringify(listeners);
    assert.match(text, /"route_config_name":"https\.8443\.shop"/);
    assert.match(text, /"name":"shop-cert"/);
    const [routes] = await fetchType(TYPE_URL.route, ["https.8443.shop"], (r) => r.length === 1);
    assert.match(JSON.stringify(routes), /outbound\|8080\|\|shop\.edge\.svc\.cluster\.local/);
    const [secret] = await fetchType(TYPE_URL.secret, ["shop-cert"], (r) => r.length === 1);
    assert.ok(JSON.stringify(secret).includes(JSON.stringify(credential.files["ca-cert.pem"]).slice(1, -1)));
    // The same node on the plaintext port proved nothing: the same request is answered with no secret.
    assert.deepEqual(await fetchType(TYPE_URL.secret, ["shop-cert"], () => true, plaintext), []);
  } finally {
    plaintext?.close();
    client?.close();
    await server.stop();
    await api.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Without an orchestrator, gateway credentials come from MESHD_GATEWAY_CREDENTIALS_DIR and follow its files", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mesh_gateway_dir_e2e_" });
  const configDir = `${dir}/config`;
  const folder = `${dir}/credentials/edge/shop-cert`;
  await Deno.mkdir(configDir);
  await Deno.writeTextFile(`${configDir}/gateway.yaml`, MUTUAL_GATEWAY_YAML);
  const first = await makePluggedInCa(DAY);
  const second = await makePluggedInCa(DAY);
  await writeCredentialFolder(folder, first);
  const credentials = await credentialsAs("spiffe://cluster.local/ns/edge/sa/ingress", dir);
  const addresses = discoveryAddresses();
  const server = startProgram(
    "mesh-discovery",
    discoveryArgs(addresses, ["--registries", "Mock", "--configDir", configDir, "--log_as_json"]),
    { ROOT_CA_DIR: dir, MESHD_GATEWAY_CREDENTIALS_DIR: `${dir}/credentials` },
  );
  let client: Client | undefined;
  try {
    await server.waitFor(/"msg":"discovery server started"/);
    client = TestAdsClient.sotwTls(
      Number(addresses.secureGRPCAddr.split(":").at(-1)),
      credentials,
      "localhost",
    );
    const node = INGRESS_NODE;
    const names = ["shop-cert", "shop-cert-cacert"];
    const chainOf = (r: Obj[]) => JSON.stringify(r.find((s) => s.name === "shop-cert") ?? {});
    const served = await fetchUntil(client, node, TYPE_URL.secret, names, (r) => r.length === 2);
    assert.ok(chainOf(served).includes(JSON.stringify(first.files["ca-cert.pem"]).slice(1, -1)));
    assert.match(JSON.stringify(served), /"validation_context"/);
    // A rotated certificate reaches the gateway without a restart.
    await writeCredentialFolder(folder, second);
    const rotated = await fetchUntil(
      client,
      node,
      TYPE_URL.secret,
      names,
      (r) => chainOf(r).includes(JSON.stringify(second.files["ca-cert.pem"]).slice(1, -1)),
    );
    assert.equal(rotated.length, 2);
  } finally {
    client?.close();
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
