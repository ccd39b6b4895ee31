import assert from "node:assert/strict";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { defaultMeshConfig } from "@mesh/shared/config/mesh";
import { startWebhookServer } from "../webhook/webhook_server.ts";
import { admissionReview, counterValue, testMetrics, virtualService } from "../webhook/_test_support.ts";
import { FIXTURES, podReview } from "./_conformance_support.ts";
import { startInjection } from "./start_injection.ts";

Deno.test("mesh-discovery's HTTPS webhook server injects on /inject with the mounted config and values", async () => {
  const dir = await Deno.makeTempDir({ prefix: "inject_server_" });
  await Deno.copyFile(new URL("inputs/default.config.yaml", FIXTURES), `${dir}/config`);
  await Deno.copyFile(new URL("inputs/default.values.json", FIXTURES), `${dir}/values`);
  const metrics = testMetrics();
  const log = new RecordingLogger();
  const injection = await startInjection({
    enabled: true,
    environment: { ENABLE_LEGACY_FSGROUP_INJECTION: "true" },
    revision: "",
    mesh: () => defaultMeshConfig(),
    metrics,
    log,
    configFile: `${dir}/config`,
    valuesFile: `${dir}/values`,
  });
  const webhook = await startWebhookServer({
    addr: "127.0.0.1:0",
    metrics,
    log,
    validationEnabled: true,
    router: injection.router,
  });
  const client = Deno.createHttpClient({ caCerts: [webhook.tls.caPem!] });
  try {
    const pod = {
      metadata: { name: "hello", labels: { app: "hello" } },
      spec: { containers: [{ name: "hello", image: "hello", ports: [{ containerPort: 80 }] }] },
    };
    const response = await fetch(`${webhook.url}/inject/cluster/east`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(podReview(pod, "shop", "u1")),
      client,
    });
    const review = await response.json();
    assert.equal(review.response.uid, "u1");
    assert.equal(review.response.allowed, true);
    assert.equal(review.response.patchType, "JSONPatch");
    const patch = JSON.parse(atob(review.response.patch)) as { path: string; value: unknown }[];
    const containers = patch.find((op) => op.path === "/spec/containers")?.value as {
      name: string;
      env?: unknown[];
    }[];
    assert.deepStrictEqual(containers.map((c) => c.name), ["hello", "mesh-proxy"]);
    const proxyConfig = (containers[1].env as { name: string; value?: string }[]).find((e) =>
      e.name === "PROXY_CONFIG"
    );
    assert.equal(proxyConfig?.value?.trim(), "{}", "the mesh defaults are not repeated in PROXY_CONFIG");
    assert.ok(
      containers[1].env?.some((e) => JSON.stringify(e) === '{"name":"MESH_META_CLUSTER_ID","value":"east"}'),
    );
    assert.equal(await counterValue(metrics, "sidecar_injection_success_total", {}), 1);
    assert.equal(injection.jobs?.started, false, "a pod of a few KiB is injected in line");

    // A pod's review past 64 KiB is judged by the worker: the same sidecar, the same count.
    const annotations = Object.fromEntries(Array.from({ length: 8000 }, (_, i) => [`note-${i}`, "x"]));
    const large = JSON.stringify(
      podReview({ ...pod, metadata: { ...pod.metadata, annotations } }, "shop", "u2"),
    );
    assert.ok(large.length > 64 * 1024);
    const post = (path: string, body: string) =>
      fetch(`${webhook.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
        client,
      });
    const largeReview = await (await post("/inject/cluster/east", large)).json();
    assert.equal(largeReview.response.uid, "u2");
    assert.deepStrictEqual(
      (JSON.parse(atob(largeReview.response.patch)) as { path: string; value: { name: string }[] }[])
        .find((op) => op.path === "/spec/containers")?.value.map((c) => c.name),
      ["hello", "mesh-proxy"],
    );
    assert.equal(await counterValue(metrics, "sidecar_injection_success_total", {}), 2);
    assert.equal(injection.jobs?.started, true);

    const routes = Array.from({ length: 1000 }, (_, i) => ({
      match: [{ uri: { regex: `^/tenant-${i}/.*$` } }],
      route: [{ destination: { host: `reviews-${i}` } }],
    }));
    const largeVs = JSON.stringify(admissionReview(virtualService({ hosts: ["reviews"], http: routes })));
    assert.ok(largeVs.length > 64 * 1024);
    assert.equal((await (await post("/validate", largeVs)).json()).response.allowed, true);
    assert.equal(webhook.validationJobs?.started, true);
  } finally {
    client.close();
    await webhook.shutdown();
    await injection.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Without an injector config file /inject is not set up; an invalid one stops startup", async () => {
  const dir = await Deno.makeTempDir({ prefix: "inject_start_" });
  const start = () =>
    startInjection({
      enabled: true,
      environment: {},
      revision: "",
      mesh: () => defaultMeshConfig(),
      metrics: testMetrics(),
      log: new RecordingLogger(),
      configFile: `${dir}/config`,
      valuesFile: `${dir}/values`,
    });
  try {
    const none = await start();
    const response = await none.router.handle(new Request("https://webhook.test/inject", { method: "POST" }));
    assert.equal(response.status, 404);
    await response.body?.cancel();
    await none.stop();

    await Deno.writeTextFile(`${dir}/config`, "templates:\n  sidecar: '{{ if }}'\n");
    await Deno.writeTextFile(`${dir}/values`, "{}");
    await assert.rejects(start(), /Invalid sidecar injector files: .*config: template "sidecar"/);
    await Deno.writeTextFile(`${dir}/config`, "policy: enabled\n");
    await Deno.remove(`${dir}/values`);
    await assert.rejects(start(), /the values file is missing/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
