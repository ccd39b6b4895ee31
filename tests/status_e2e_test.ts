/**
 * Distribution status end to end: the real `mesh-discovery` with `DISCOVERY_ENABLE_STATUS` on reads a test API
 * server, a sidecar stand-in ACKs what it gets, and the VirtualService ends with a `Reconciled` condition for
 * its current generation. Two replicas against one API server: when the status leader is killed, the survivor
 * takes the duty, the dead replica's report stops counting once its liveness Lease ran out, and every resource
 * ends `Reconciled` for the proxies that remain, each status write made by the status leader of the moment. An
 * API server that hangs on, or answers 500 to, every status request slows the status writer only: the sidecar
 * keeps getting pushes.
 */
import assert from "node:assert/strict";
import { TYPE_URL } from "../proto/type_urls.ts";
import { type ApiObject, kubeconfigFor, OrchApiServer } from "../shared/testing/orch_api_server.ts";
import { waitFor } from "../shared/testing/wait_for.ts";
import { TestAdsClient, testNode, type TestResponse } from "../discovery/xds/_test_ads_client.ts";
import {
  discoveryAddresses,
  discoveryArgs,
  orchestratorFlags,
  startProgram,
  untilReady,
} from "./helpers/programs.ts";

const VS_PATH = "/apis/networking.mesh.io/v1beta1/namespaces/shop/virtualservices/ratings";
const DR_PATH = "/apis/networking.mesh.io/v1beta1/namespaces/shop/destinationrules/ratings";
const STATUS_DUTY = "mesh-status-leader";

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

const destinationRule: ApiObject = {
  apiVersion: "networking.mesh.io/v1beta1",
  kind: "DestinationRule",
  metadata: { name: "ratings", namespace: "shop" },
  spec: { host: "ratings" },
};

/** A sidecar that subscribes to clusters and ACKs every response it gets; `seen` holds them all. */
function ackingSidecar(
  port: number,
  ip = "10.9.9.9",
): { client: TestAdsClient; seen: TestResponse[]; done: Promise<void> } {
  const client = TestAdsClient.sotw(port);
  const node = testNode(`sidecar~${ip}~app.shop~shop.svc.cluster.local`, { NAMESPACE: "shop" });
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

/**
 * A replica with status on, under its own identity and bearer token (so the API server's ledger tells its
 * writes apart); `env` adds settings.
 */
async function startDiscovery(
  api: OrchApiServer,
  dir: string,
  identity = "discovery-a",
  env: Record<string, string> = {},
) {
  const kubeconfig = `${dir}/${identity}.kubeconfig`;
  await Deno.writeTextFile(
    kubeconfig,
    kubeconfigFor(api.url).replace("token: test-token", `token: ${identity}`),
  );
  const addresses = discoveryAddresses();
  const server = startProgram(
    "mesh-discovery",
    discoveryArgs(addresses, [...orchestratorFlags(kubeconfig), "--log_as_json"]),
    { DISCOVERY_ENABLE_STATUS: "true", POD_NAME: identity, POD_NAMESPACE: "mesh-system", ...env },
  );
  await untilReady(addresses.httpAddr);
  return { identity, server, addresses, port: Number(addresses.grpcAddr.split(":").at(-1)) };
}

async function statusOf(
  api: OrchApiServer,
  path = VS_PATH,
): Promise<Record<string, unknown> | undefined> {
  const response = await fetch(`${api.url}${path}`);
  return (await response.json() as { status?: Record<string, unknown> }).status;
}

/** Whether the replica at `httpAddr` says it leads the status duty. */
async function leadsStatus(httpAddr: string): Promise<boolean> {
  try {
    const response = await fetch(`http://${httpAddr}/debug/leaderz`);
    const duties = response.ok ? await response.json() as { duty: string; leading: boolean }[] : [];
    return duties.some((d) => d.duty === STATUS_DUTY && d.leading);
  } catch {
    return false;
  }
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

/**
 * One replica against an API server that answers every status request (the reporter's, the writer's; never a
 * watch) with `fault` while `faulty()`: a first push reaches a healthy sidecar and a status request meets the
 * fault, then a new service is pushed to the sidecar all the same; `after` runs once it was.
 */
async function pushesThrough(
  fault: () => Response | Promise<Response>,
  faulty: () => boolean,
  after: (api: OrchApiServer) => Promise<void>,
  cleanup: () => void = () => {},
): Promise<void> {
  const api = OrchApiServer.start();
  const dir = await Deno.makeTempDir({ prefix: "mesh_status_e2e_" });
  api.apply(service("ratings", "10.96.0.10"));
  api.apply(virtualService(["ratings"]));
  let met = 0;
  api.intercept = (request, path) => {
    const statusWork = path.includes("/configmaps") || path.endsWith("/status") ||
      (request.method === "GET" && path.startsWith("/apis/networking.mesh.io/v1beta1/namespaces/"));
    if (!faulty() || !statusWork || new URL(request.url).searchParams.has("watch")) return undefined;
    met++;
    return fault();
  };
  const { server, port } = await startDiscovery(api, dir);
  const sidecar = ackingSidecar(port);
  try {
    await waitFor(
      () => sidecar.seen.length > 0 && met > 0,
      "a first push and a failing status request",
      30_000,
    );
    api.apply(service("reviews", "10.96.0.11"));
    await waitFor(
      () => sidecar.seen.some((r) => r.resources.some((c) => c.name.includes("reviews.shop.svc"))),
      "the push of the new service while status requests fail",
      30_000,
    );
    await after(api);
  } finally {
    cleanup();
    sidecar.client.close();
    await sidecar.done;
    await server.stop();
    await api.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("An API server hanging on every status request does not keep pushes from a healthy sidecar", async () => {
  const release = Promise.withResolvers<void>();
  await pushesThrough(
    () => release.promise.then(() => new Response("released", { status: 503 })),
    () => true,
    (api) => {
      assert.ok(
        !api.requests.some((r) => r.startsWith("PUT ") && r.endsWith("/status")),
        "no status write got past the hanging reads",
      );
      return Promise.resolve();
    },
    () => release.resolve(),
  );
});

Deno.test("An API server answering 500 to every status request delays status, never the pushes to a healthy sidecar", async () => {
  let failing = true;
  await pushesThrough(
    () => Response.json({ kind: "Status", code: 500, message: "etcd is down" }, { status: 500 }),
    () => failing,
    async (api) => {
      assert.equal(
        reconciled(await statusOf(api)),
        undefined,
        "no status was written while the API server failed",
      );
      failing = false;
      await waitFor(
        async () => reconciled(await statusOf(api))?.status === "True",
        "the Reconciled condition once the API server recovers",
        45_000,
      );
    },
  );
});

Deno.test("Two replicas: once the status leader is killed, the survivor writes every resource Reconciled for the proxies that remain", async () => {
  const api = OrchApiServer.start();
  const dir = await Deno.makeTempDir({ prefix: "mesh_status_e2e_" });
  api.apply(service("ratings", "10.96.0.10"));
  api.apply(virtualService(["ratings"]));
  api.apply(destinationRule);
  const fast = { DISCOVERY_LEADER_ELECTION_TTL: "3s" };
  const a = await startDiscovery(api, dir, "discovery-a", fast);
  const running = [a.server];
  const sidecars: ReturnType<typeof ackingSidecar>[] = [];
  try {
    await waitFor(() => leadsStatus(a.addresses.httpAddr), "discovery-a leading status", 30_000, 100);
    const b = await startDiscovery(api, dir, "discovery-b", fast);
    running.push(b.server);
    sidecars.push(ackingSidecar(a.port, "10.9.9.1"), ackingSidecar(b.port, "10.9.9.2"));
    const said = async (path: string, message: string, generation: number) => {
      const condition = reconciled(await statusOf(api, path));
      return condition?.message === message && condition.observedGeneration === generation;
    };
    await waitFor(
      async () =>
        await said(VS_PATH, "2/2 proxies up to date.", 1) &&
        await said(DR_PATH, "2/2 proxies up to date.", 1),
      "both replicas' proxies counted",
      30_000,
    );

    // The leader dies without releasing anything; its proxy goes with it.
    await a.server.stop("SIGKILL");
    running.shift();
    await sidecars[0].done;
    await waitFor(() => leadsStatus(b.addresses.httpAddr), "discovery-b taking the status duty", 30_000, 100);
    // A resource nobody changed: the dead replica's report stops counting once its liveness ran out.
    await waitFor(
      () => said(DR_PATH, "1/1 proxies up to date.", 1),
      "the dead replica's report dropped",
      30_000,
    );
    // A resource changed after the kill: the survivor's proxies alone.
    api.apply(virtualService(["ratings", "ratings.shop"]));
    await waitFor(() => said(VS_PATH, "1/1 proxies up to date.", 2), "generation 2 Reconciled", 30_000);
    assert.equal(reconciled(await statusOf(api))?.status, "True");

    // Nothing was written by two leaders: every status write came from the status leader of its moment.
    assert.deepEqual(api.ledger.overlaps, []);
    const statusWrites = api.ledger.writes.filter((w) => w.method === "PUT" && w.path.endsWith("/status"));
    assert.ok(statusWrites.some((w) => w.by === "discovery-a"), "discovery-a wrote status while it led");
    assert.ok(statusWrites.some((w) => w.by === "discovery-b"), "discovery-b wrote status once it led");
    for (const write of statusWrites) assert.equal(write.by, write.leaseHolders[STATUS_DUTY], write.path);
  } finally {
    for (const sidecar of sidecars) sidecar.client.close();
    await Promise.all(sidecars.map((s) => s.done));
    await Promise.all(running.map((server) => server.stop()));
    await api.close();
    await Deno.remove(dir, { recursive: true });
  }
});
