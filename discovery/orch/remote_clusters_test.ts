import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import * as k8s from "@kubernetes/client-node";
import { silentLogger } from "@mesh/shared/log/logger";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { type ApiObject, kubeconfigFor, OrchApiServer } from "@mesh/shared/testing/orch_api_server";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { waitFor } from "../config/_test_support.ts";
import { AggregateRegistry } from "../registry/aggregate_registry.ts";
import { MemoryRegistry } from "../registry/memory_registry.ts";
import { RateLimiter } from "./rate_limiter.ts";
import { OrchRegistry } from "./orch_registry.ts";
import { MULTI_CLUSTER_LABEL, RemoteClusters } from "./remote_clusters.ts";

const HOST = "ratings.shop.svc.cluster.local";

function secret(name: string, clusters: Record<string, string>, labelled = true): ApiObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace: "mesh-system", labels: labelled ? { [MULTI_CLUSTER_LABEL]: "true" } : {} },
    data: Object.fromEntries(
      Object.entries(clusters).map(([id, text]) => [id, Buffer.from(text).toString("base64")]),
    ),
  };
}

function ratings(api: OrchApiServer, clusterIp: string): void {
  api.apply({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "ratings", namespace: "shop" },
    spec: { clusterIP: clusterIp, ports: [{ name: "http", port: 8080 }] },
  });
}

/** The local API server, a remote-clusters controller over it, and the aggregate it feeds. */
async function withRemotes(
  fn: (world: {
    local: OrchApiServer;
    remotes: RemoteClusters;
    aggregate: AggregateRegistry;
    log: RecordingLogger;
    errors: (reason: string) => Promise<number>;
  }) => Promise<void>,
): Promise<void> {
  const local = OrchApiServer.start();
  const log = new RecordingLogger();
  const metrics = new Metrics("discovery", { version: "t", tag: "t" });
  const aggregate = new AggregateRegistry("c1");
  aggregate.addRegistry(new MemoryRegistry({ provider: "Orchestrator", clusterId: "c1" }));
  const kubeConfig = new k8s.KubeConfig();
  kubeConfig.loadFromString(local.kubeconfig());
  const remotes = new RemoteClusters({
    kubeConfig,
    limiter: new RateLimiter(1000, 100),
    namespace: "mesh-system",
    localClusterId: "c1",
    log,
    metrics,
    retryMs: 50,
    createRegistry: (clusterId, remoteConfig, onFailure) =>
      new OrchRegistry({
        kubeConfig: remoteConfig,
        limiter: new RateLimiter(1000, 100),
        log: silentLogger,
        domain: "cluster.local",
        clusterId,
        defaultExportTo: ["*"],
        edsForHeadless: false,
        retryMs: 50,
        onFailure,
      }),
  }, aggregate);
  const errors = async (reason: string) =>
    (await metrics.counter("discovery_remote_cluster_errors").get()).values.find((v) =>
      v.labels.reason === reason
    )
      ?.value ?? 0;
  try {
    remotes.start();
    await fn({ local, remotes, aggregate, log, errors });
  } finally {
    await remotes.stop();
    await local.close();
  }
}

Deno.test("RemoteClusters adds a registry per cluster a labelled Secret names, replaces it on a new kubeconfig and removes it with its key", async () => {
  const second = OrchApiServer.start();
  const third = OrchApiServer.start();
  ratings(second, "10.97.0.1");
  ratings(third, "10.98.0.1");
  try {
    await withRemotes(async ({ local, remotes, aggregate }) => {
      local.apply(secret("unlabelled", { c9: second.kubeconfig() }, false));
      local.apply(secret("remotes", { c2: second.kubeconfig() }));
      await waitFor(() => aggregate.getService(HOST) !== undefined, "cluster c2's service");
      assert.deepEqual(
        aggregate.registries().map((r) => r.clusterId),
        ["c1", "c2"],
        "the unlabelled Secret is not read",
      );
      assert.equal(aggregate.getService(HOST)?.addresses[0], "10.97.0.1");
      await waitFor(() => remotes.status()[0]?.state === "synced", "c2 synced");
      assert.equal(remotes.status()[0].server, second.url);

      local.apply(secret("remotes", { c2: third.kubeconfig() }));
      await waitFor(
        () => aggregate.getService(HOST)?.addresses[0] === "10.98.0.1",
        "c2 read from its new server",
      );
      assert.deepEqual(aggregate.registries().map((r) => r.clusterId), ["c1", "c2"]);

      local.apply(secret("remotes", { c3: second.kubeconfig() }));
      await waitFor(
        () => aggregate.registries().map((r) => r.clusterId).join() === "c1,c3",
        "c2 gone, c3 added",
      );
      local.delete("v1", "Secret", "mesh-system", "remotes");
      await waitFor(() => aggregate.registries().length === 1, "c3 gone with its Secret");
      assert.equal(aggregate.getService(HOST), undefined);
      assert.deepEqual(remotes.status(), []);
    });
  } finally {
    await second.close();
    await third.close();
  }
});

Deno.test("RemoteClusters refuses a malformed kubeconfig, a duplicate cluster id and the local id alone, logging and counting each once", async () => {
  const second = OrchApiServer.start();
  ratings(second, "10.97.0.1");
  try {
    await withRemotes(async ({ local, remotes, aggregate, log, errors }) => {
      local.apply(
        secret("first", { c2: second.kubeconfig(), bad: "clusters: [ {", c1: second.kubeconfig() }),
      );
      local.apply(secret("second", { c2: second.kubeconfig() }));
      await waitFor(
        () => remotes.status().length === 1 && aggregate.getService(HOST) !== undefined,
        "c2 added",
      );
      await waitFor(() => log.matching("error", "already added from").length === 1, "the duplicate refused");
      assert.equal(log.matching("error", 'key "bad" is not a usable kubeconfig').length, 1);
      assert.equal(log.matching("error", "the cluster this server runs in").length, 1);
      assert.equal(await errors("kubeconfig"), 1);
      assert.equal(await errors("duplicate_cluster_id"), 2);
      assert.equal(remotes.status()[0].secret, "mesh-system/first");

      // The same refused Secret again is not logged or counted again.
      local.apply(secret("second", { c2: second.kubeconfig() }));
      local.apply(secret("probe", { c4: second.kubeconfig() }));
      await waitFor(() => remotes.status().length === 2, "a later Secret is read");
      assert.equal(await errors("duplicate_cluster_id"), 2);

      // A kubeconfig that breaks keeps the cluster as it was added.
      local.apply(secret("probe", { c4: "current-context: none" }));
      await waitFor(
        () => log.matching("error", 'key "c4" is not a usable kubeconfig').length === 1,
        "refused",
      );
      assert.deepEqual(remotes.status().map((c) => c.clusterId), ["c2", "c4"]);

      // Once the first Secret lets c2 go, the second Secret's c2 is taken.
      local.apply(secret("first", {}));
      await waitFor(() => remotes.status()[0]?.secret === "mesh-system/second", "c2 from the second Secret");
    });
  } finally {
    await second.close();
  }
});

Deno.test("RemoteClusters refuses a data value that is not a string and a kubeconfig naming host files alone; the Secret's other clusters are added", async () => {
  // The value 5 threw out of the Secret's handler ("The first argument must be of type string"), so none of
  // its clusters was added; the token-file kubeconfig was taken, and the client read that file from this host
  // to send as a bearer token to the server it named.
  const second = OrchApiServer.start();
  ratings(second, "10.97.0.1");
  try {
    await withRemotes(async ({ local, remotes, aggregate, log, errors }) => {
      const mixed = secret("mixed", {
        c2: second.kubeconfig(),
        c3: second.kubeconfig().replace("token: test-token", "token-file: /etc/hostname"),
      });
      (mixed.data as Record<string, unknown>).c4 = 5;
      local.apply(mixed);
      await waitFor(() => aggregate.getService(HOST) !== undefined, "cluster c2's service");
      await waitFor(
        () => log.matching("error", "is not a usable kubeconfig").length === 2,
        "c3 and c4 refused",
      );
      assert.deepEqual(remotes.status().map((c) => c.clusterId), ["c2"]);
      assert.equal(
        log.matching("error", 'key "c4" is not a usable kubeconfig (its data value is not a string)').length,
        1,
      );
      assert.match(
        String(log.matching("error", 'key "c3" is not a usable kubeconfig')[0]?.msg),
        /users\[0\]\.user\.token-file: expected inline data only/,
      );
      assert.equal(await errors("kubeconfig"), 2);
    });
  } finally {
    await second.close();
  }
});

Deno.test("RemoteClusters keeps an unreachable cluster, retrying it, without holding the local cluster back", async () => {
  await withRemotes(async ({ local, remotes, aggregate, log, errors }) => {
    const closed = OrchApiServer.start();
    const url = closed.url;
    await closed.close();
    local.apply(secret("remotes", { c2: kubeconfigFor(url) }));
    await waitFor(() => remotes.status()[0]?.state === "unreachable", "c2 shown unreachable");
    // Five informers fail at first; more failures than that are retries.
    await waitFor(() => remotes.status()[0].failures > 5, "c2 retried");
    assert.equal(aggregate.hasSynced(), true, "the local registries alone decide readiness");
    assert.equal(await errors("unreachable"), 1, "counted once, however often retried");
    assert.equal(log.matching("warn", "remote cluster cannot be reached").length, 1);
    assert.match(remotes.status()[0].lastError ?? "", /ECONNREFUSED|refused|connect/i);
  });
});

Deno.test("RemoteClusters runs attached work for each cluster added, before or after attaching, and stops it when the cluster goes or is replaced", async () => {
  const second = OrchApiServer.start();
  const third = OrchApiServer.start();
  try {
    await withRemotes(async ({ local, remotes }) => {
      const events: string[] = [];
      local.apply(secret("remotes", { c2: second.kubeconfig() }));
      await waitFor(() => remotes.status().length === 1, "c2 added");
      const detach = remotes.attach(({ clusterId, client }) => {
        events.push(`start ${clusterId} ${client.kubeConfig.getCurrentCluster()?.server}`);
        return () => void events.push(`stop ${clusterId}`);
      });
      assert.deepEqual(events, [`start c2 ${second.url}`], "a cluster already added gets the work at once");

      local.apply(secret("remotes", { c2: second.kubeconfig(), c3: third.kubeconfig() }));
      await waitFor(() => events.length === 2, "c3's work");
      assert.equal(events[1], `start c3 ${third.url}`);

      local.apply(secret("remotes", { c2: third.kubeconfig(), c3: third.kubeconfig() }));
      await waitFor(() => events.length === 4, "c2 replaced");
      assert.deepEqual(events.slice(2), ["stop c2", `start c2 ${third.url}`]);

      local.apply(secret("remotes", { c2: third.kubeconfig() }));
      await waitFor(() => events.length === 5, "c3 gone");
      assert.equal(events[4], "stop c3");

      await detach();
      assert.deepEqual(events.slice(5), ["stop c2"], "detaching stops the work of every cluster");
      local.apply(secret("remotes", { c2: third.kubeconfig(), c4: second.kubeconfig() }));
      await waitFor(() => remotes.status().length === 2, "c4 added");
      assert.equal(events.length, 6, "work detached is not started for a cluster added later");
    });
  } finally {
    await second.close();
    await third.close();
  }
});
