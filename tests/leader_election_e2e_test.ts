/**
 * Two replicas of `mesh-discovery` on one orchestrator (the test API server, in this process): every duty is
 * led by one of them; proxies spread over both, and those naming a WorkloadGroup are auto-registered. When the
 * leader is killed (SIGKILL, nothing released), the survivor takes every duty once the Leases expire, the
 * killed replica's proxies reconnect to it and get their whole configuration, the entries of proxies that moved
 * stay, and those of proxies that left go: after the grace period for one that disconnected, and, with the
 * default connection settings (connections live forever), a grace period after its replica's liveness Lease
 * ran out for one whose replica died with it. The API server's ledger shows no Lease changed hands during its
 * holder's term and every clean-up was written by the `mesh-leader` holder of the moment.
 */
import assert from "node:assert/strict";
import { TYPE_URL } from "../proto/type_urls.ts";
import { kubeconfigFor, OrchApiServer } from "../shared/testing/orch_api_server.ts";
import { waitFor } from "../shared/testing/wait_for.ts";
import { TestAdsClient, testNode } from "../discovery/xds/_test_ads_client.ts";
import {
  discoveryAddresses,
  discoveryArgs,
  orchestratorFlags,
  type RunningProgram,
  startProgram,
} from "./helpers/programs.ts";

const CLUSTER = "outbound|8080||ratings.shop.svc.cluster.local";
const TTL_S = 3;
const GRACE_S = 2;
const DUTY_COUNT = 5;
const ENTRIES = "/apis/networking.mesh.io/v1alpha3/namespaces/vm/workloadentries";

function seed(api: OrchApiServer): void {
  api.apply({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "ratings", namespace: "shop" },
    spec: { clusterIP: "10.96.0.10", ports: [{ name: "http", port: 8080 }] },
  });
  api.apply({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "ratings-0", namespace: "shop", labels: { app: "ratings" } },
    spec: { serviceAccountName: "ratings" },
    status: { podIP: "10.1.0.1" },
  });
  api.apply({
    apiVersion: "v1",
    kind: "Endpoints",
    metadata: { name: "ratings", namespace: "shop" },
    subsets: [{
      addresses: [{ ip: "10.1.0.1", targetRef: { kind: "Pod", name: "ratings-0", namespace: "shop" } }],
      ports: [{ name: "http", port: 9080 }],
    }],
  });
  api.apply({
    apiVersion: "networking.mesh.io/v1alpha3",
    kind: "WorkloadGroup",
    metadata: { name: "reviews", namespace: "vm" },
    spec: {
      metadata: { labels: { app: "reviews" } },
      template: { ports: { http: 8080 }, serviceAccount: "reviews" },
    },
  });
}

/** A replica: its own identity, and its own bearer token, so the API server's ledger tells its writes apart. */
async function replica(dir: string, api: OrchApiServer, identity: string) {
  const kubeconfig = `${dir}/${identity}.kubeconfig`;
  await Deno.writeTextFile(
    kubeconfig,
    kubeconfigFor(api.url).replace("token: test-token", `token: ${identity}`),
  );
  const addresses = discoveryAddresses();
  const program = startProgram(
    "mesh-discovery",
    discoveryArgs(addresses, [
      ...orchestratorFlags(kubeconfig),
      "--orchApiQPS",
      "500",
      "--orchApiBurst",
      "1000",
      "--log_as_json",
    ]),
    {
      POD_NAME: identity,
      DISCOVERY_LEADER_ELECTION_TTL: `${TTL_S}s`,
      DISCOVERY_ENABLE_WORKLOAD_ENTRY_AUTOREGISTRATION: "true",
      // The VMs connect to the plaintext port, as the reference's own VM tests turn validation off for.
      DISCOVERY_WORKLOAD_ENTRY_VALIDATE_IDENTITY: "false",
      DISCOVERY_WORKLOAD_ENTRY_GRACE_PERIOD: `${GRACE_S}s`,
    },
  );
  return { identity, program, addresses, port: Number(addresses.grpcAddr.split(":").at(-1)) };
}

type Replica = Awaited<ReturnType<typeof replica>>;

async function duties(r: Replica): Promise<{ duty: string; leading: boolean; holder: string }[]> {
  try {
    const response = await fetch(`http://${r.addresses.httpAddr}/debug/leaderz`);
    return response.ok ? await response.json() : [];
  } catch {
    return [];
  }
}

async function leadsAll(r: Replica): Promise<boolean> {
  const list = await duties(r);
  return list.length === DUTY_COUNT && list.every((d) => d.leading && d.holder === r.identity);
}

type Entry = { metadata: { name: string; annotations?: Record<string, string> } };

async function entries(api: OrchApiServer): Promise<Map<string, Entry>> {
  const list = await (await fetch(`${api.url}${ENTRIES}`)).json() as { items: Entry[] };
  return new Map(list.items.map((e) => [e.metadata.name, e]));
}

/**
 * A VM proxy of the `reviews` group: keeps one ADS stream open to the first replica of `targets()` that
 * answers, reconnecting whenever the stream ends (a replica dies, or its connection reaches its age), and
 * records what each connection was sent.
 */
class VmProxy {
  readonly node: Record<string, unknown>;
  /** Per connection: the port, and whether it got the ratings cluster and its endpoint. */
  readonly connections: { port: number; fullConfig: boolean }[] = [];
  #client?: TestAdsClient;
  #stopped = false;
  readonly #loop: Promise<void>;

  constructor(readonly ip: string, readonly targets: () => readonly number[]) {
    this.node = testNode(`sidecar~${ip}~vm-${ip.split(".").at(-1)}.vm~vm.svc.cluster.local`, {
      NAMESPACE: "vm",
      AUTO_REGISTER_GROUP: "reviews",
    });
    this.#loop = this.#run();
  }

  get entryName(): string {
    return `reviews-${this.ip}`;
  }

  /** The replica port of the current connection. */
  get port(): number | undefined {
    return this.connections.at(-1)?.port;
  }

  /** Disconnects for good. */
  async leave(): Promise<void> {
    this.#stopped = true;
    this.#client?.close();
    await this.#loop;
  }

  async #run(): Promise<void> {
    while (!this.#stopped) {
      for (const port of this.targets()) {
        if (this.#stopped) return;
        const client = this.#client = TestAdsClient.sotw(port);
        try {
          await this.#fetchConfig(client, port);
          await client.ended();
        } catch {
          // This replica is gone or the stream ended early: try the next.
        } finally {
          client.close();
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async #fetchConfig(client: TestAdsClient, port: number): Promise<void> {
    const ack = (r: { typeUrl: string; version: string; nonce: string }, names: string[] = []) =>
      client.send({
        node: this.node,
        type_url: r.typeUrl,
        version_info: r.version,
        response_nonce: r.nonce,
        resource_names: names,
      });
    client.send({ node: this.node, type_url: TYPE_URL.cluster, resource_names: [] });
    let cds = await client.next(20_000);
    while (!cds.resources.some((r) => r.name === CLUSTER)) {
      ack(cds);
      cds = await client.next(20_000);
    }
    ack(cds);
    client.send({ node: this.node, type_url: TYPE_URL.endpoint, resource_names: [CLUSTER] });
    const eds = await client.next(20_000);
    ack(eds, [CLUSTER]);
    const fullConfig = eds.typeUrl === TYPE_URL.endpoint &&
      JSON.stringify(eds.resources).includes("10.1.0.1");
    this.connections.push({ port, fullConfig });
  }
}

Deno.test("Two replicas: killing the leader moves every duty to the survivor, its proxies follow, and auto-registered entries are kept or cleaned up once", async () => {
  const api = OrchApiServer.start();
  const dir = await Deno.makeTempDir({ prefix: "mesh_leader_e2e_" });
  seed(api);
  const started: RunningProgram[] = [];
  const proxies: VmProxy[] = [];
  try {
    const a = await replica(dir, api, "discovery-a");
    started.push(a.program);
    await waitFor(() => leadsAll(a), "discovery-a leading every duty", 40_000, 100);
    const b = await replica(dir, api, "discovery-b");
    started.push(b.program);
    await waitFor(async () => (await duties(b)).length === DUTY_COUNT, "discovery-b electing", 40_000, 100);
    assert.ok((await duties(b)).every((d) => !d.leading && d.holder === "discovery-a"));

    let aAlive = true;
    const moving = new VmProxy("10.2.0.11", () => aAlive ? [a.port] : [b.port]);
    const orphan = new VmProxy("10.2.0.12", () => aAlive ? [a.port] : []);
    const staying = new VmProxy("10.2.0.21", () => [b.port]);
    const leaving = new VmProxy("10.2.0.22", () => [b.port]);
    proxies.push(moving, orphan, staying, leaving);
    await waitFor(
      async () => {
        const held = await entries(api);
        return proxies.every((p) => p.port !== undefined && held.has(p.entryName));
      },
      "every VM proxy connected and registered",
      30_000,
      100,
    );
    const registered = await entries(api);
    const controller = (p: VmProxy) =>
      registered.get(p.entryName)?.metadata.annotations?.["mesh.io/workloadController"];
    assert.deepEqual(proxies.map(controller), ["discovery-a", "discovery-a", "discovery-b", "discovery-b"]);

    // The leader dies without releasing anything; its proxies lose their streams. The orphan's entry stays
    // marked connected to it: nothing is left to mark it otherwise.
    aAlive = false;
    await a.program.stop("SIGKILL");
    const orphaned = (await entries(api)).get(orphan.entryName)?.metadata.annotations ?? {};
    assert.equal(orphaned["mesh.io/workloadController"], "discovery-a");
    assert.ok(orphaned["mesh.io/connectedAt"], "the orphan's entry is marked connected to the dead replica");
    await leaving.leave();
    await waitFor(() => leadsAll(b), "discovery-b taking every duty", 30_000, 100);

    // Each Lease was taken by the survivor within two lease durations of the dead leader's last renewal.
    const renewals = new Map<string, number>();
    for (const write of api.ledger.writes) {
      if (!write.path.includes("/leases/") || write.path.includes("/leases/mesh-replica-")) continue;
      const lease = write.path.split("/").at(-1)!;
      if (write.by === "discovery-a") renewals.set(lease, write.at);
      else if (
        write.by === "discovery-b" && renewals.has(lease) && write.leaseHolders[lease] === "discovery-b"
      ) {
        const gap = write.at - renewals.get(lease)!;
        assert.ok(gap <= 2 * TTL_S * 1000, `${lease} taken ${gap} ms after the dead leader's last renewal`);
        renewals.delete(lease);
      }
    }
    assert.deepEqual([...renewals.keys()], [], "every Lease the dead leader held was taken");

    await waitFor(() => moving.port === b.port, "the moved proxy reconnecting to the survivor", 30_000, 100);
    assert.equal(moving.connections.at(-1)?.fullConfig, true, "the moved proxy gets its whole configuration");

    // The entry of the proxy that left cleanly goes after the grace period; the one of the proxy whose replica
    // died with it, a grace period after the dead replica's liveness Lease ran out.
    await waitFor(
      async () => {
        const held = await entries(api);
        return !held.has(leaving.entryName) && !held.has(orphan.entryName);
      },
      "the entries of the proxies that left cleaned up",
      40_000,
      200,
    );
    const kept = await entries(api);
    assert.ok(kept.has(moving.entryName), "the moved proxy keeps its entry");
    assert.ok(kept.has(staying.entryName), "the proxy that stayed keeps its entry");
    assert.equal(
      kept.get(moving.entryName)?.metadata.annotations?.["mesh.io/workloadController"],
      "discovery-b",
    );

    assert.ok(
      api.ledger.writes.some((w) =>
        w.by === "discovery-a" && w.path.endsWith("/leases/mesh-replica-discovery-a")
      ),
      "the dead replica kept its liveness Lease while it lived",
    );
    // Nothing was written by two leaders: no Lease changed hands during its holder's term, and every clean-up
    // was made by the holder of mesh-leader at that moment, once.
    assert.deepEqual(api.ledger.overlaps, []);
    const deletes = api.ledger.writes.filter((w) =>
      w.method === "DELETE" && w.path.includes("/workloadentries/")
    );
    assert.deepEqual(
      deletes.map((w) => w.path.split("/").at(-1)).sort(),
      [leaving.entryName, orphan.entryName].sort(),
    );
    for (const write of deletes) assert.equal(write.by, write.leaseHolders["mesh-leader"], write.path);
  } finally {
    await Promise.all(proxies.map((p) => p.leave()));
    await Promise.all(started.map((p) => p.stop()));
    await api.close();
    await Deno.remove(dir, { recursive: true });
  }
});
