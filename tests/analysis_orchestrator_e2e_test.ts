/**
 * Analysis in orchestrator mode, end to end: the real `mesh-discovery` with `DISCOVERY_ENABLE_ANALYSIS` reads a
 * test API server; a VirtualService naming a missing gateway, one naming a subset its DestinationRule does not
 * define, and a Gateway whose selector matches no pod get the reference's messages in their
 * `status.validationMessages` and in `/debug/analyzez`, as does a Service port off the naming convention; fixing
 * the resources (and starting the gateway's pod) clears them.
 */
import assert from "node:assert/strict";
import { type ApiObject, OrchApiServer } from "../shared/testing/orch_api_server.ts";
import { waitFor } from "../shared/testing/wait_for.ts";
import { discoveryAddresses, discoveryArgs, orchestratorFlags, startProgram } from "./helpers/programs.ts";

const NETWORKING = "networking.mesh.io/v1beta1";

interface DebugMessage {
  code: string;
  text: string;
}

function service(name: string, selector: Record<string, string>, port: Record<string, unknown>): ApiObject {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: "shop" },
    spec: { clusterIP: "10.96.0.10", selector, ports: [port] },
  };
}

function virtualService(name: string, spec: Record<string, unknown>): ApiObject {
  return { apiVersion: NETWORKING, kind: "VirtualService", metadata: { name, namespace: "shop" }, spec };
}

function destinationRule(subsets: string[]): ApiObject {
  return {
    apiVersion: NETWORKING,
    kind: "DestinationRule",
    metadata: { name: "ratings", namespace: "shop" },
    spec: {
      host: "ratings.shop.svc.cluster.local",
      subsets: subsets.map((name) => ({ name, labels: { version: name } })),
    },
  };
}

const GATEWAY: ApiObject = {
  apiVersion: NETWORKING,
  kind: "Gateway",
  metadata: { name: "ingress", namespace: "shop" },
  spec: {
    selector: { app: "ingress" },
    servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["*"] }],
  },
};

const INGRESS_POD: ApiObject = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "ingress-1", namespace: "shop", labels: { app: "ingress" } },
  spec: { containers: [{ name: "mesh-proxy", image: "proxy:1" }] },
  status: { phase: "Running", podIP: "10.1.0.9" },
};

/** The codes of a mesh resource's `status.validationMessages`, sorted; [] when the field is absent. */
async function statusCodes(api: OrchApiServer, plural: string, name: string): Promise<string[]> {
  const response = await fetch(`${api.url}/apis/${NETWORKING}/namespaces/shop/${plural}/${name}`);
  const object = await response.json() as { status?: { validationMessages?: { type: { code: string } }[] } };
  return (object.status?.validationMessages ?? []).map((m) => m.type.code).sort();
}

Deno.test("In orchestrator mode, analysis messages reach each resource's status and /debug/analyzez until fixed", async () => {
  const api = OrchApiServer.start();
  const dir = await Deno.makeTempDir({ prefix: "mesh_analysis_orch_e2e_" });
  api.apply(service("ratings", { app: "ratings" }, { name: "web", port: 8080 }));
  api.apply(destinationRule(["v1"]));
  api.apply(virtualService("shop", {
    hosts: ["shop.example.com"],
    gateways: ["shop-gateway"],
    http: [{ route: [{ destination: { host: "ratings.shop.svc.cluster.local" } }] }],
  }));
  api.apply(virtualService("reviews", {
    hosts: ["ratings"],
    http: [{ route: [{ destination: { host: "ratings", subset: "v2" } }] }],
  }));
  api.apply(GATEWAY);
  await Deno.writeTextFile(`${dir}/kubeconfig`, api.kubeconfig());
  const addresses = discoveryAddresses();
  const server = startProgram(
    "mesh-discovery",
    discoveryArgs(addresses, [
      ...orchestratorFlags(`${dir}/kubeconfig`),
      "--log_as_json",
    ]),
    { DISCOVERY_ENABLE_ANALYSIS: "true", POD_NAME: "discovery-a", POD_NAMESPACE: "mesh-system" },
  );
  const analyzez = async () => await (await fetch(`http://${addresses.httpAddr}/debug/analyzez`)).json();
  const debugMessages = async (key: string): Promise<string[]> =>
    ((await analyzez()).resources[key] as DebugMessage[] | undefined ?? []).map((m) => `${m.code} ${m.text}`)
      .sort();
  try {
    await server.waitFor(/"msg":"discovery server started"/);
    await waitFor(
      async () =>
        (await statusCodes(api, "virtualservices", "shop")).length > 0 &&
        (await statusCodes(api, "virtualservices", "reviews")).length > 0 &&
        (await statusCodes(api, "gateways", "ingress")).length > 0,
      "the messages in the resources' status",
      30_000,
      100,
    );
    assert.deepEqual(await statusCodes(api, "virtualservices", "shop"), ["IST0101", "IST0132"]);
    assert.deepEqual(await statusCodes(api, "virtualservices", "reviews"), ["IST0101"]);
    assert.deepEqual(await statusCodes(api, "gateways", "ingress"), ["IST0101"]);
    assert.deepEqual(await debugMessages("VirtualService/shop/shop"), [
      'IST0101 Referenced gateway not found: "shop-gateway"',
      "IST0132 one or more host [shop.example.com] defined in VirtualService shop/shop not found in " +
      "Gateway shop/shop-gateway.",
    ]);
    assert.deepEqual(await debugMessages("VirtualService/shop/reviews"), [
      'IST0101 Referenced host+subset in destinationrule not found: "ratings+v2"',
    ]);
    assert.deepEqual(await debugMessages("Gateway/shop/ingress"), [
      'IST0101 Referenced selector not found: "app=ingress"',
    ]);
    assert.deepEqual(await debugMessages("Service/shop/ratings"), [
      "IST0118 Port name web (port: 8080, targetPort: 0) doesn't follow the naming convention of Mesh port.",
    ]);
    assert.ok((await analyzez()).analyzers.includes("injection.Analyzer"), "every analyzer runs");

    api.apply(virtualService("shop", {
      hosts: ["shop.example.com"],
      http: [{ route: [{ destination: { host: "ratings.shop.svc.cluster.local" } }] }],
    }));
    api.apply(destinationRule(["v1", "v2"]));
    api.apply(service("ingress", { app: "ingress" }, { name: "http", port: 80, protocol: "TCP" }));
    await waitFor(
      async () =>
        (await statusCodes(api, "virtualservices", "shop")).length === 0 &&
        (await statusCodes(api, "virtualservices", "reviews")).length === 0,
      "the VirtualServices' messages to clear from their status",
      30_000,
      100,
    );
    assert.deepEqual(await statusCodes(api, "gateways", "ingress"), ["IST0101"], "no pod is selected yet");

    // A pod alone changes no mesh configuration: analysis runs again because an object it reads changed.
    api.apply(INGRESS_POD);
    await waitFor(
      async () => (await statusCodes(api, "gateways", "ingress")).length === 0,
      "the Gateway's message to clear once its pod runs",
      30_000,
      100,
    );
    for (const key of ["VirtualService/shop/shop", "VirtualService/shop/reviews", "Gateway/shop/ingress"]) {
      assert.deepEqual(await debugMessages(key), [], `${key} has no message left`);
    }
  } finally {
    await server.stop();
    await api.close();
    await Deno.remove(dir, { recursive: true });
  }
});
