/**
 * The orchestrator end to end: the real `mesh-discovery discovery --registries Orchestrator` reads a test API
 * server (in this process) through a kubeconfig. Readiness waits for the first sync; Services, Endpoints and
 * Pods turn into clusters and endpoints for a connected sidecar; an Endpoints change pushes EDS alone.
 */
import assert from "node:assert/strict";
import { TYPE_URL } from "../proto/type_urls.ts";
import { type ApiObject, kubeconfigFor, OrchApiServer } from "../shared/testing/orch_api_server.ts";
import { KUBECTL, needs } from "../shared/testing/system_tools.ts";
import { TestAdsClient, type TestAdsClient as Client, testNode } from "../discovery/xds/_test_ads_client.ts";
import { waitFor } from "../shared/testing/wait_for.ts";
import {
  discoveryAddresses,
  discoveryArgs,
  freePort,
  orchestratorFlags,
  startProgram,
  untilReady,
} from "./helpers/programs.ts";

const CLUSTER = "outbound|8080||ratings.shop.svc.cluster.local";

/** The Service behind {@link CLUSTER}. */
const RATINGS_SERVICE: ApiObject = {
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: "ratings", namespace: "shop" },
  spec: { clusterIP: "10.96.0.10", ports: [{ name: "http", port: 8080 }] },
};

function endpoints(ips: string[]): ApiObject {
  return {
    apiVersion: "v1",
    kind: "Endpoints",
    metadata: { name: "ratings", namespace: "shop" },
    subsets: [{
      addresses: ips.map((ip, i) => ({
        ip,
        targetRef: { kind: "Pod", name: `ratings-${i}`, namespace: "shop" },
      })),
      ports: [{ name: "http", port: 9080 }],
    }],
  };
}

function pod(i: number, ip: string): ApiObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: `ratings-${i}`, namespace: "shop", labels: { app: "ratings" } },
    spec: { serviceAccountName: "ratings" },
    status: { podIP: ip },
  };
}

async function readyStatus(httpAddr: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`http://${httpAddr}/ready`);
  return { status: response.status, body: await response.text() };
}

async function start(dir: string, kubeconfig: string, configDir: string[] = ["--configDir", dir]) {
  await Deno.writeTextFile(`${dir}/kubeconfig`, kubeconfig);
  const addresses = discoveryAddresses();
  const server = startProgram(
    "mesh-discovery",
    discoveryArgs(addresses, [
      ...orchestratorFlags(`${dir}/kubeconfig`),
      ...configDir,
      "--log_as_json",
    ]),
  );
  await server.waitFor(/"msg":"discovery server started"/);
  return { server, addresses };
}

Deno.test("Without a reachable orchestrator, mesh-discovery stays up and not ready, saying why", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mesh_orch_e2e_" });
  const unreachable = kubeconfigFor(`http://127.0.0.1:${freePort()}`);
  const { server, addresses } = await start(dir, unreachable);
  try {
    await server.waitFor(/orchestrator list or watch failed; retrying/);
    const ready = await readyStatus(addresses.httpAddr);
    assert.equal(ready.status, 503);
    assert.match(ready.body, /Orchestrator/);
  } finally {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("A proxy that comes before the orchestrator's Services are listed is told to retry, then gets them all at once", async () => {
  const api = OrchApiServer.start();
  const dir = await Deno.makeTempDir({ prefix: "mesh_orch_e2e_" });
  api.apply(RATINGS_SERVICE);
  // The Services list is held until released: the registry has not synced meanwhile.
  const listed = Promise.withResolvers<void>();
  api.intercept = async (request, path) => {
    if (path === "/api/v1/services" && !new URL(request.url).searchParams.has("watch")) await listed.promise;
    return undefined;
  };
  const { server, addresses } = await start(dir, api.kubeconfig());
  const port = Number(addresses.grpcAddr.split(":").at(-1));
  const node = testNode("sidecar~10.9.9.9~app.shop~shop.svc.cluster.local", { NAMESPACE: "shop" });
  let early: Client | undefined;
  let client: Client | undefined;
  try {
    await waitFor(
      () => api.requests.some((r) => r.startsWith("GET /api/v1/services")),
      "the Services list asked",
    );
    early = TestAdsClient.sotw(port);
    early.send({ node, type_url: TYPE_URL.cluster, resource_names: [] });
    // UNAVAILABLE (14), which a proxy retries; a response instead fails here.
    const refusal = await early.next(10_000).then(
      (r) => `served ${r.resources.length} clusters: ${r.resources.map((c) => c.name).join(", ")}`,
      (error: Error) => error.message,
    );
    assert.match(
      refusal,
      /status 14 before a response: Discovery is not ready: waiting for every source to sync \(registries not synced: Orchestrator/,
    );
    const notReady = await readyStatus(addresses.httpAddr);
    assert.equal(notReady.status, 503);
    assert.match(notReady.body, /registries not synced/);
    assert.match(
      notReady.body,
      /xds: waiting for every source to sync/,
      "/ready says ADS is holding streams back",
    );

    listed.resolve();
    await untilReady(addresses.httpAddr);
    client = TestAdsClient.sotw(port);
    client.send({ node, type_url: TYPE_URL.cluster, resource_names: [] });
    const cds = await client.next(20_000);
    assert.ok(
      cds.resources.some((r) => r.name === CLUSTER),
      `the first response holds the listed Service: ${cds.resources.map((r) => r.name).join(", ")}`,
    );
  } finally {
    listed.resolve();
    early?.close();
    client?.close();
    await server.stop();
    await api.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Orchestrator services and endpoints reach a sidecar and a proxyless client; an Endpoints change pushes EDS alone", async () => {
  const api = OrchApiServer.start();
  const dir = await Deno.makeTempDir({ prefix: "mesh_orch_e2e_" });
  api.apply(RATINGS_SERVICE);
  api.apply(pod(0, "10.1.0.1"));
  api.apply(endpoints(["10.1.0.1"]));
  const { server, addresses } = await start(dir, api.kubeconfig());
  let client: Client | undefined;
  let proxyless: Client | undefined;
  try {
    await untilReady(addresses.httpAddr);

    client = TestAdsClient.sotw(Number(addresses.grpcAddr.split(":").at(-1)));
    const node = testNode("sidecar~10.9.9.9~app.shop~shop.svc.cluster.local", { NAMESPACE: "shop" });
    const ack = (r: { typeUrl: string; version: string; nonce: string }, names: string[] = []) =>
      client!.send({
        node,
        type_url: r.typeUrl,
        version_info: r.version,
        response_nonce: r.nonce,
        resource_names: names,
      });
    client.send({ node, type_url: TYPE_URL.cluster, resource_names: [] });
    // Once ready, the first response holds the synced services: no stream is served a partial snapshot.
    const cds = await client.next(20_000);
    assert.ok(cds.resources.some((r) => r.name === CLUSTER), "the first CDS response has the synced service");
    ack(cds);
    client.send({ node, type_url: TYPE_URL.endpoint, resource_names: [CLUSTER] });
    const eds = await client.next(20_000);
    assert.equal(eds.typeUrl, TYPE_URL.endpoint);
    assert.match(JSON.stringify(eds.resources[0].fields), /10\.1\.0\.1/);
    ack(eds, [CLUSTER]);

    api.apply(pod(1, "10.1.0.2"));
    api.apply(endpoints(["10.1.0.1", "10.1.0.2"]));
    const pushed = await client.next(20_000);
    assert.equal(pushed.typeUrl, TYPE_URL.endpoint, "an endpoint change pushes EDS first and alone");
    assert.match(JSON.stringify(pushed.resources[0].fields), /10\.1\.0\.2/);
    ack(pushed, [CLUSTER]);
    // A probe: the listeners, asked for only now, are the very next response, so nothing else was pushed.
    client.send({ node, type_url: TYPE_URL.listener, resource_names: [] });
    const probe = await client.next(20_000);
    assert.equal(probe.typeUrl, TYPE_URL.listener, "nothing but EDS was pushed");

    // A proxyless gRPC client of the same namespace gets the service's listener, cluster and endpoints.
    proxyless = TestAdsClient.sotw(Number(addresses.grpcAddr.split(":").at(-1)));
    const grpcNode = testNode("sidecar~10.9.9.8~grpc.shop~shop.svc.cluster.local", {
      NAMESPACE: "shop",
      GENERATOR: "grpc",
    });
    const target = "ratings.shop.svc.cluster.local:8080";
    for (
      const [typeUrl, name] of [[TYPE_URL.listener, target], [TYPE_URL.cluster, CLUSTER], [
        TYPE_URL.endpoint,
        CLUSTER,
      ]]
    ) {
      proxyless.send({ node: grpcNode, type_url: typeUrl, resource_names: [name] });
      const response = await proxyless.next(20_000);
      assert.equal(response.typeUrl, typeUrl);
      assert.deepEqual(response.resources.map((r) => r.name), [name]);
      if (typeUrl === TYPE_URL.endpoint) {
        assert.match(
          JSON.stringify(response.resources[0].fields),
          /10\.1\.0\.1.*10\.1\.0\.2|10\.1\.0\.2.*10\.1\.0\.1/,
        );
      }
    }
  } finally {
    proxyless?.close();
    client?.close();
    await server.stop();
    await api.close();
    await Deno.remove(dir, { recursive: true });
  }
});

async function kubectl(dir: string, ...args: string[]): Promise<void> {
  const out = await new Deno.Command("kubectl", {
    args: ["--kubeconfig", `${dir}/kubeconfig`, "--cache-dir", `${dir}/cache`, ...args],
    env: { HOME: dir },
    stdin: "null",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
}

function virtualServiceYaml(timeout: string): string {
  return `apiVersion: networking.mesh.io/v1beta1
kind: VirtualService
metadata:
  name: ratings
  namespace: shop
spec:
  hosts: [ratings]
  http:
  - timeout: ${timeout}
    route:
    - destination:
        host: ratings
`;
}

Deno.test(
  "kubectl applies a VirtualService through the orchestrator and a connected sidecar's routes follow; an invalid one is rejected alone",
  needs(KUBECTL),
  async () => {
    const api = OrchApiServer.start();
    const dir = await Deno.makeTempDir({ prefix: "mesh_orch_e2e_" });
    api.apply({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "ratings", namespace: "shop" },
      spec: { clusterIP: "10.96.0.10", ports: [{ name: "http", port: 8080 }] },
    });
    // The orchestrator is the only config source: no --configDir.
    const { server, addresses } = await start(dir, api.kubeconfig(), []);
    let client: Client | undefined;
    try {
      // Before the orchestrator's lists arrive a stream is refused with UNAVAILABLE, which this client does not
      // retry: it connects once the server is ready.
      await untilReady(addresses.httpAddr);
      client = TestAdsClient.sotw(Number(addresses.grpcAddr.split(":").at(-1)));
      const node = testNode("sidecar~10.9.9.9~app.shop~shop.svc.cluster.local", { NAMESPACE: "shop" });
      const routeTimeout = async (want: string) => {
        for (;;) {
          const r = await client!.next(20_000);
          client!.send({
            node,
            type_url: r.typeUrl,
            version_info: r.version,
            response_nonce: r.nonce,
            resource_names: ["8080"],
          });
          const text = JSON.stringify(r.resources.map((x) => x.fields));
          if (r.typeUrl === TYPE_URL.route && text.includes(`"seconds":"${want}"`)) return;
        }
      };
      client.send({ node, type_url: TYPE_URL.route, resource_names: ["8080"] });
      await kubectl(
        dir,
        "apply",
        "--validate=false",
        "--filename",
        await write(dir, "vs.yaml", virtualServiceYaml("7s")),
      );
      await routeTimeout("7");
      await kubectl(
        dir,
        "apply",
        "--validate=false",
        "--filename",
        await write(dir, "vs.yaml", virtualServiceYaml("9s")),
      );
      await routeTimeout("9");

      await kubectl(
        dir,
        "apply",
        "--validate=false",
        "--filename",
        await write(
          dir,
          "bad.yaml",
          virtualServiceYaml("soon").replace("name: ratings\n  namespace", "name: broken\n  namespace"),
        ),
      );
      await waitFor(
        async () =>
          (await (await fetch(`http://${addresses.httpAddr}/debug/configz`)).text()).includes("broken"),
        "the invalid VirtualService shown as rejected",
        20_000,
        100,
      );
      const ready = await readyStatus(addresses.httpAddr);
      assert.equal(ready.status, 200, ready.body);
    } finally {
      client?.close();
      await server.stop();
      await api.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
);

async function write(dir: string, name: string, text: string): Promise<string> {
  await Deno.writeTextFile(`${dir}/${name}`, text);
  return `${dir}/${name}`;
}
