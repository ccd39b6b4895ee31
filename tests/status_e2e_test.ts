/**
 * Distribution status end to end: the real `mesh-discovery` with `DISCOVERY_ENABLE_STATUS` on reads a test API
 * server, a sidecar stand-in ACKs what it gets, and the VirtualService ends with a `Reconciled` condition for
 * its current generation. An API server that hangs on every status request slows the status writer only: the
 * sidecar keeps getting pushes.
 */
import assert from "node:assert/strict";
import { TYPE_URL } from "../proto/type_urls.ts";
import { type ApiObject, OrchApiServer } from "../shared/testing/orch_api_server.ts";
import { waitFor } from "../shared/testing/wait_for.ts";
import { TestAdsClient, testNode, type TestResponse } from "../discovery/xds/_test_ads_client.ts";
import { discoveryAddresses, discoveryArgs, startProgram } from "./helpers/programs.ts";

const VS_PATH = "/apis/networking.mesh.io/v1beta1/namespaces/shop/virtualservices/ratings";

function service(name: string, ip: string): ApiObject {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: "shop" },
    spec: { clusterIP: ip, ports: [{ name: "http", port: 8080 }] },
  };
}

function virtualService(hosts: string[]): ApiObject {
  return {
    apiVersion: "networking.mesh.io/v1beta1",
    kind: "VirtualService",
    metadata: { name: "ratings", namespace: "shop" },
    spec: { hosts, http: [{ route: [{ destination: { host: "ratings" } }] }] },
  };
}

/** A sidecar that subscribes to clusters and ACKs every response it gets; `seen` holds them all. */
function ackingSidecar(port: number): { client: TestAdsClient; seen: TestResponse[]; done: Promise<void> } {
  const client = TestAdsClient.sotw(port);
  const node = testNode("sidecar~10.9.9.9~app.shop~shop.svc.cluster.local", { NAMESPACE: "shop" });
  const seen: TestResponse[] = [];
  client.send({ node, type_url: TYPE_URL.cluster, resource_names: [] });
  const done = (async () => {
    while (true) {
      const response = await client.next(600_000).catch(() => undefined);
      if (response === undefined) return;
      seen.push(response);
      client.send({
        node,
        type_url: response.typeUrl,
        version_info: response.version,
        response_nonce: response.nonce,
        resource_names: [],
      });
    }
  })();
  return { client, seen, done };
}

async function startDiscovery(api: OrchApiServer, dir: string) {
  await Deno.writeTextFile(`${dir}/kubeconfig`, api.kubeconfig());
  const addresses = discoveryAddresses();
  const server = startProgram(
    "mesh-discovery",
    discoveryArgs(addresses, [
      "--registries",
      "Orchestrator",
      "--orchconfig",
      `${dir}/kubeconfig`,
      "--log_as_json",
    ]),
    { DISCOVERY_ENABLE_STATUS: "true", POD_NAME: "discovery-a", POD_NAMESPACE: "mesh-system" },
  );
  await server.waitFor(/"msg":"discovery server started"/);
  return { server, port: Number(addresses.grpcAddr.split(":").at(-1)) };
}

async function statusOf(api: OrchApiServer): Promise<Record<string, unknown> | undefined> {
  const response = await fetch(`${api.url}${VS_PATH}`);
  return (await response.json() as { status?: Record<string, unknown> }).status;
}

function reconciled(status: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  return (status?.conditions as Record<string, unknown>[] | undefined)?.find((c) => c.type === "Reconciled");
}

Deno.test("A VirtualService ends Reconciled for its current generation once the sidecar ACKs it", async () => {
  const api = OrchApiServer.start();
  const dir = await Deno.makeTempDir({ prefix: "mesh_status_e2e_" });
  api.apply(service("ratings", "10.96.0.10"));
  api.apply(virtualService(["ratings"]));
  const { server, port } = await startDiscovery(api, dir);
  const sidecar = ackingSidecar(port);
  try {
    await waitFor(
      async () => {
        const status = await statusOf(api);
        return reconciled(status)?.status === "True" && status?.observedGeneration === 1;
      },
      "the Reconciled condition of generation 1",
      30_000,
    );
    assert.equal(reconciled(await statusOf(api))?.message, "1/1 proxies up to date.");

    api.apply(virtualService(["ratings", "ratings.shop"]));
    await waitFor(
      async () => {
        const status = await statusOf(api);
        return reconciled(status)?.status === "True" && status?.observedGeneration === 2;
      },
      "the Reconciled condition of generation 2",
      30_000,
    );
    const condition = reconciled(await statusOf(api))!;
    assert.equal(condition.message, "1/1 proxies up to date.");
    assert.equal(condition.observedGeneration, 2);
    assert.ok(
      api.requests.some((r) =>
        r.startsWith("PUT /api/v1/namespaces/mesh-system/configmaps/discovery-a-distribution")
      ),
      "the replica wrote its report where the leader reads it",
    );
  } finally {
    sidecar.client.close();
    await sidecar.done;
    await server.stop();
    await api.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("An API server hanging on every status request does not keep pushes from a healthy sidecar", async () => {
  const api = OrchApiServer.start();
  const dir = await Deno.makeTempDir({ prefix: "mesh_status_e2e_" });
  api.apply(service("ratings", "10.96.0.10"));
  api.apply(virtualService(["ratings"]));
  const release = Promise.withResolvers<void>();
  let hung = 0;
  api.intercept = (request, path) => {
    const statusWork = path.includes("/configmaps") || path.endsWith("/status") ||
      (request.method === "GET" && path.startsWith("/apis/networking.mesh.io/v1beta1/namespaces/"));
    if (!statusWork || new URL(request.url).searchParams.has("watch")) return undefined;
    hung++;
    return release.promise.then(() => new Response("released", { status: 503 }));
  };
  const { server, port } = await startDiscovery(api, dir);
  const sidecar = ackingSidecar(port);
  try {
    await waitFor(
      () => sidecar.seen.length > 0 && hung > 0,
      "a first push and a hanging status request",
      30_000,
    );
    api.apply(service("reviews", "10.96.0.11"));
    await waitFor(
      () => sidecar.seen.some((r) => r.resources.some((c) => c.name.includes("reviews.shop.svc"))),
      "the push of the new service while status requests hang",
      30_000,
    );
    assert.ok(
      !api.requests.some((r) => r.startsWith("PUT ") && r.endsWith("/status")),
      "no status write got past the hanging reads",
    );
  } finally {
    release.resolve();
    sidecar.client.close();
    await sidecar.done;
    await server.stop();
    await api.close();
    await Deno.remove(dir, { recursive: true });
  }
});
