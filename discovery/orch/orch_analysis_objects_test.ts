import assert from "node:assert/strict";
import { silentLogger } from "@mesh/shared/log/logger";
import { type ApiObject, OrchApiServer } from "@mesh/shared/testing/orch_api_server";
import { waitFor } from "@mesh/shared/testing/wait_for";
import { loadOrchConfig } from "./orch_client.ts";
import { RateLimiter } from "./rate_limiter.ts";
import { OrchRegistry } from "./orch_registry.ts";
import { OrchSecretStore } from "./orch_secret_store.ts";
import { OrchAnalysisObjects } from "./orch_analysis_objects.ts";

const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

function pod(labels: Record<string, string>, phase = "Running"): ApiObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "ratings-1", namespace: "shop", labels, annotations: { [LAST_APPLIED]: "{}" } },
    spec: { containers: [{ name: "app", image: "ratings:1", args: ["--big"] }] },
    status: { phase, podIP: "10.1.0.1" },
  };
}

/** The typed client's objects as plain JSON. */
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

function fixtures(api: OrchApiServer, served = { apps: true, definitions: true }): void {
  api.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: "shop", labels: { team: "a" } } });
  api.apply(pod({ app: "ratings" }));
  api.apply({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "ratings", namespace: "shop" },
    spec: { selector: { app: "ratings" }, ports: [{ name: "web", port: 80 }] },
  });
  if (served.apps) {
    api.apply({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: {
        name: "ratings",
        namespace: "shop",
        annotations: { [LAST_APPLIED]: "x".repeat(10_000), "sidecar.mesh.io/inject": "true" },
      },
      spec: {
        replicas: 2,
        template: {
          metadata: { labels: { app: "ratings" }, annotations: { [LAST_APPLIED]: "{}" } },
          spec: { containers: [{ name: "app", image: "ratings:1", env: [{ name: "A", value: "1" }] }] },
        },
      },
    });
  }
  api.apply({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "shop-cert", namespace: "shop" },
    data: { "tls.key": "c2VjcmV0" },
  });
  api.apply({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "remote", namespace: "mesh-system", labels: { "mesh/multiCluster": "true" } },
    data: { west: "a3ViZWNvbmZpZw==" },
  });
  for (const [namespace, name] of [["mesh-system", "mesh-sidecar-injector"], ["mesh-system", "other"]]) {
    api.apply({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name, namespace },
      data: { values: '{"global":{"hub":"h","tag":"t"}}', config: "policy: enabled" },
    });
  }
  api.apply({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "mesh-sidecar-injector", namespace: "shop" },
    data: { values: "{}" },
  });
  if (!served.definitions) return;
  api.apply({
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "serviceroles.rbac.istio.io" },
    spec: { group: "rbac.istio.io", names: { kind: "ServiceRole", plural: "serviceroles" }, versions: [] },
  });
}

async function withObjects(
  api: OrchApiServer,
  shareSecrets: boolean,
  fn: (objects: OrchAnalysisObjects, changes: () => number) => void | Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "mesh_orch_analysis_" });
  await Deno.writeTextFile(`${dir}/kubeconfig`, api.kubeconfig());
  const client = {
    kubeConfig: loadOrchConfig({ orchConfig: `${dir}/kubeconfig`, serviceHost: "" }),
    limiter: new RateLimiter(1000, 100),
    log: silentLogger,
    retryMs: 50,
  };
  const registry = new OrchRegistry({
    ...client,
    domain: "cluster.local",
    clusterId: "c1",
    defaultExportTo: ["*"],
    edsForHeadless: false,
  });
  const secrets = shareSecrets ? new OrchSecretStore(client) : undefined;
  const objects = new OrchAnalysisObjects({
    ...client,
    registry,
    ...(secrets ? { secrets } : {}),
    namespace: "mesh-system",
  });
  let changes = 0;
  objects.onChange(() => changes++);
  try {
    registry.start();
    secrets?.start();
    objects.start();
    await waitFor(() => objects.synced, "every source listed");
    await fn(objects, () => changes);
  } finally {
    await objects.stop();
    await secrets?.stop();
    await registry.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("Analysis reads the registry's pods, services and namespaces and slim copies of the rest, sharing the Secret watch", async () => {
  const api = OrchApiServer.start();
  fixtures(api);
  try {
    await withObjects(api, true, (objects, changes) => {
      assert.equal(changes(), 1, "listeners hear once that everything is listed");
      const [p] = objects.list("Pod");
      assert.deepEqual(p.metadata.labels, { app: "ratings" });
      assert.equal((p.spec as { containers: { image: string }[] }).containers[0].image, "ratings:1");
      assert.deepEqual(objects.list("Namespace").map((n) => n.metadata.labels), [{ team: "a" }]);
      assert.deepEqual(plain(objects.list("Service")[0].spec), {
        selector: { app: "ratings" },
        ports: [{ name: "web", port: 80 }],
      });
      assert.deepEqual(objects.list("Deployment"), [{
        kind: "Deployment",
        metadata: { name: "ratings", namespace: "shop", annotations: { "sidecar.mesh.io/inject": "true" } },
        spec: {
          template: {
            metadata: { labels: { app: "ratings" } },
            spec: { containers: [{ name: "app", image: "ratings:1" }] },
          },
        },
      }]);
      const secrets = [...objects.list("Secret")].sort((a, b) =>
        a.metadata.name.localeCompare(b.metadata.name)
      );
      assert.deepEqual(secrets, [
        {
          kind: "Secret",
          metadata: { name: "remote", namespace: "mesh-system", labels: { "mesh/multiCluster": "true" } },
          data: { west: "" },
        },
        { kind: "Secret", metadata: { name: "shop-cert", namespace: "shop" } },
      ]);
      assert.deepEqual(objects.list("ConfigMap"), [{
        kind: "ConfigMap",
        metadata: { name: "mesh-sidecar-injector", namespace: "mesh-system" },
        data: { values: '{"global":{"hub":"h","tag":"t"}}' },
      }]);
      assert.deepEqual(objects.list("CustomResourceDefinition"), [{
        kind: "CustomResourceDefinition",
        metadata: { name: "serviceroles.rbac.istio.io" },
        spec: { group: "rbac.istio.io", names: { kind: "ServiceRole" } },
      }]);
      const secretLists = api.requests.filter((r) =>
        r.startsWith("GET /api/v1/secrets") && !r.includes("watch")
      );
      assert.equal(secretLists.length, 1, "the credential store's watch is shared");
      assert.ok(
        !api.requests.some((r) => r.startsWith("GET /api/v1/configmaps")),
        "ConfigMaps are read in the control plane's namespace only",
      );
    });
  } finally {
    await api.close();
  }
});

Deno.test("A pod's status report is not an analysis change; a label change is, and a new Deployment is", async () => {
  const api = OrchApiServer.start();
  fixtures(api);
  try {
    await withObjects(api, false, async (objects, changes) => {
      assert.equal(
        objects.list("Secret").length,
        2,
        "Secrets watched on their own without a credential store",
      );
      const before = changes();
      api.apply(pod({ app: "ratings" }, "Succeeded"));
      // Events of one watch arrive in order: once the label change is heard, the status change was handled.
      api.apply(pod({ app: "ratings", version: "v2" }, "Succeeded"));
      await waitFor(() => changes() > before, "the label change");
      assert.equal(changes(), before + 1);
      api.apply({
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "reviews", namespace: "shop" },
        spec: { template: { metadata: { labels: { app: "reviews" } }, spec: { containers: [] } } },
      });
      await waitFor(() => objects.list("Deployment").length === 2, "the new Deployment");
      assert.equal(changes(), before + 2);
    });
  } finally {
    await api.close();
  }
});

Deno.test("A cluster that does not serve Deployments or definitions is analyzed without them", async () => {
  const api = OrchApiServer.start({ absentGroups: ["apps", "apiextensions.k8s.io"] });
  fixtures(api, { apps: false, definitions: false });
  try {
    await withObjects(api, true, (objects) => {
      assert.deepEqual(objects.list("Deployment"), []);
      assert.deepEqual(objects.list("CustomResourceDefinition"), []);
      assert.equal(objects.list("Pod").length, 1);
    });
  } finally {
    await api.close();
  }
});
