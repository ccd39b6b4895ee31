import assert from "node:assert/strict";
import { parse } from "yaml";
import { Router } from "@mesh/shared/http/router";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { counterValue, testMetrics } from "../webhook/_test_support.ts";
import { caseState, comparable, conformanceCases, FIXTURES, podReview } from "./_conformance_support.ts";
import { parseInjectorConfig, parseInjectorValues } from "./inject_config.ts";
import { injectWebhookRoutes, parseInjectEnvs } from "./inject_webhook.ts";
import type { InjectorState } from "./inject_review.ts";
import { REFUSAL_LOG_INTERVAL_MS } from "../webhook/validation_webhook.ts";
import { applyJsonPatch } from "@mesh/shared/testing/json_patch";
import { startInjection } from "./start_injection.ts";

type Obj = Record<string, unknown>;

const fixture = (file: string) => JSON.parse(Deno.readTextFileSync(new URL(file, FIXTURES)));
const DEFAULT_VALUES = parseInjectorValues(
  Deno.readTextFileSync(new URL("inputs/default.values.json", FIXTURES)),
  "values",
);
const MESH_DEFAULTS = parse(Deno.readTextFileSync(new URL("inputs/mesh-defaults.yaml", FIXTURES))) as Obj;

function setup(config: Obj, values: Obj = DEFAULT_VALUES, mesh: Obj = MESH_DEFAULTS, now = () => 0) {
  const metrics = testMetrics();
  const log = new RecordingLogger();
  const state: InjectorState = {
    config: parseInjectorConfig(JSON.stringify(config), "config", {}),
    values,
    mesh,
  };
  const deps = { metrics, log, state: () => state, revision: "default", now };
  const router = injectWebhookRoutes(new Router(), deps);
  const post = (body: BodyInit | null, path = "/inject", contentType = "application/json") =>
    router.handle(
      new Request(`https://webhook.test${path}`, {
        method: "POST",
        headers: { "content-type": contentType },
        body,
      }),
    );
  const count = (name: string, labels: Record<string, string> = {}) =>
    counterValue(metrics, `sidecar_injection_${name}_total`, labels);
  return { post, count, log };
}

const decodePatch = (patch: string) =>
  JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(patch), (c) => c.charCodeAt(0))));

Deno.test("The injection webhook answers the reference's run-and-serve requests as the reference does", async () => {
  const spec = fixture("webhook/run-and-serve.json");
  const { post, count } = setup(spec.minimalTemplateConfig);
  for (const c of spec.cases) {
    const body = c.bodyBytesBase64
      ? Uint8Array.from(atob(c.bodyBytesBase64), (ch) => ch.charCodeAt(0))
      : c.body && JSON.stringify(c.body);
    const response = await post(body ?? null, "/inject", c.contentType);
    assert.equal(response.status, c.wantStatusCode, c.name);
    if (response.status !== 200) {
      await response.body?.cancel();
      continue;
    }
    const review = await response.json();
    assert.equal(
      review.response.allowed,
      c.wantAllowed,
      `${c.name}: ${JSON.stringify(review.response.status)}`,
    );
    if (c.body) assert.equal(review.apiVersion, c.body.apiVersion, c.name);
    if (c.wantPatch === undefined) continue;
    if (c.wantPatch === null) {
      assert.equal(review.response.patch, undefined, c.name);
      continue;
    }
    const pod = c.body.request.object;
    const ours = applyJsonPatch(pod, decodePatch(review.response.patch));
    assert.deepStrictEqual(ours, applyJsonPatch(pod, c.wantPatch), c.name);
  }
  assert.equal(await count("requests"), spec.cases.length);
  assert.equal(await count("success"), 2);
  assert.equal(await count("skip", { reason: "sidecar.mesh.io/inject or a neverInjectSelector says no" }), 1);
  assert.equal(await count("failure", { type: "http" }), 2);
  assert.equal(await count("failure", { type: "decode" }), 1);
});

Deno.test("/inject/<key>/<value> pairs become proxy env as the reference reads them", () => {
  for (const c of fixture("webhook/parse-inject-envs.json").cases) {
    assert.deepStrictEqual(parseInjectEnvs(c.path), c.want, c.name);
  }
});

Deno.test("/inject/cluster/<c>/net/<n> sets the sidecar's cluster and network env", async () => {
  const { post } = setup(fixture("webhook/run-and-serve.json").minimalTemplateConfig);
  const pod = { metadata: { name: "p" }, spec: { containers: [{ name: "app", image: "app" }] } };
  const response = await post(JSON.stringify(podReview(pod, "ns")), "/inject/cluster/c1/net/n1");
  const review = await response.json();
  const result = applyJsonPatch(pod, decodePatch(review.response.patch)) as Obj;
  const sidecar = ((result.spec as Obj).containers as Obj[]).find((c) => c.name === "mesh-proxy")!;
  assert.deepStrictEqual(sidecar.env, [
    { name: "MESH_META_CLUSTER_ID", value: "c1" },
    { name: "MESH_META_NETWORK", value: "n1" },
  ]);
  assert.equal(((result.metadata as Obj).labels as Obj)["topology.mesh.io/network"], "n1");
});

Deno.test("The injection policy follows the reference's injectRequired table", async () => {
  for (const c of fixture("webhook/inject-required.json").cases) {
    const { post } = setup({ templates: { sidecar: "spec: {}" }, ...c.config });
    const pod = { metadata: c.meta, spec: c.podSpec };
    const review = await (await post(JSON.stringify(podReview(pod, c.meta.namespace ?? "")))).json();
    assert.equal(review.response.patch !== undefined, c.want, c.meta.name);
  }
});

Deno.test("Templates named by inject.mesh.io/templates and aliases are merged in order", async () => {
  for (const c of fixture("webhook/templates.json").cases) {
    const { post } = setup(c.config, {}, {});
    const pod = parse(c.input) as Obj;
    const review = await (await post(JSON.stringify(podReview(pod, "")))).json();
    const result = applyJsonPatch(pod, decodePatch(review.response.patch)) as Obj;
    const expected = parse(c.expected) as Obj;
    assert.deepStrictEqual(comparable(result), comparable(expected), c.name);
  }
});

Deno.test("Prometheus merge follows the mesh setting unless the pod's annotation says otherwise", async () => {
  for (const c of fixture("webhook/prometheus-merge.json").cases) {
    const { post } = setup(
      { policy: "enabled", templates: { sidecar: "spec:\n  containers:\n  - name: mesh-proxy" } },
      {},
      {
        ...(c.mesh ?? {}),
        defaultConfig: { statusPort: 15020 },
      },
    );
    const pod = { metadata: { name: "p", annotations: c.annotations ?? {} }, spec: { containers: [] } };
    const review = await (await post(JSON.stringify(podReview(pod, "ns")))).json();
    const result = applyJsonPatch(pod, decodePatch(review.response.patch)) as Obj;
    const annotations = (result.metadata as Obj).annotations as Obj;
    assert.equal(annotations["prometheus.io/port"] === "15020", c.want, c.name);
  }
});

Deno.test("Bad requests are refused with their reason and counted, and the webhook keeps serving", async () => {
  const config = {
    policy: "enabled",
    templates: {
      sidecar: "spec:\n  containers:\n  - name: mesh-proxy\n    image: {{ fromJSON .Values.bad | len }}",
    },
  };
  const { post, count } = setup(config, { bad: "{}" });
  const pod = { metadata: { name: "p" }, spec: { containers: [{ name: "app" }] } };

  const service = { ...podReview({ kind: "Service", metadata: { name: "s" } }, "ns") };
  ((service.request as Obj).kind as Obj).kind = "Service";
  const other = await (await post(JSON.stringify(service))).json();
  assert.deepStrictEqual([other.response.allowed, other.response.patch], [true, undefined]);
  assert.equal(await count("skip", { reason: "not a pod" }), 1);

  const garbage = await (await post("{not json")).json();
  assert.equal(garbage.response.allowed, false);
  assert.match(garbage.response.status.message, /Cannot decode body as JSON/);

  const big = await post(JSON.stringify({ pad: "x".repeat(3 * 1024 * 1024) }));
  assert.equal(big.status, 413);
  assert.match((await big.json()).error, /^Request body is larger than \d+ bytes$/, "names the cap");

  const annotated = {
    ...pod,
    metadata: { name: "p", annotations: { "traffic.sidecar.mesh.io/excludeOutboundPorts": "x" } },
  };
  const refused = await (await post(JSON.stringify(podReview(annotated, "ns")))).json();
  assert.equal(refused.response.allowed, false);
  assert.match(refused.response.status.message, /"traffic\.sidecar\.mesh\.io\/excludeOutboundPorts"/);
  assert.equal(await count("failure", { type: "annotation" }), 1);

  const broken = setup({ policy: "enabled", templates: { sidecar: "spec: {{ .Values.x.y }}: [" } }, {});
  const failed = await (await broken.post(JSON.stringify(podReview(pod, "ns")))).json();
  assert.equal(failed.response.allowed, false);
  assert.match(failed.response.status.message, /Template "sidecar" failed/);
  assert.equal(await broken.count("failure", { type: "inject" }), 1);

  const fine = await (await post(JSON.stringify(podReview(pod, "ns")))).json();
  assert.equal(fine.response.allowed, true);
  assert.equal(await count("success"), 1);
  const failures = ["decode", "http", "annotation"].map((type) => count("failure", { type }));
  assert.deepStrictEqual(await Promise.all(failures), [1, 1, 1]);
  assert.equal(await count("requests"), 5);
});

Deno.test("INJECT_ENABLED=false leaves /inject unregistered", async () => {
  const injection = await startInjection({
    enabled: false,
    environment: {},
    revision: "",
    mesh: () => ({}),
    metrics: testMetrics(),
    log: new RecordingLogger(),
  });
  const response = await injection.router.handle(
    new Request("https://webhook.test/inject", { method: "POST" }),
  );
  assert.equal(response.status, 404);
  await response.body?.cancel();
  await injection.stop();
});

Deno.test("A flood of refusals is logged once per kind per interval, with how many were not logged", async () => {
  let clock = 0;
  const { post, count, log } = setup({ policy: "enabled" }, {}, {}, () => clock);
  for (let i = 0; i < 5; i++) await (await post("{not json")).body?.cancel();
  assert.equal(await count("failure", { type: "decode" }), 5);
  assert.equal(log.matching("warn", "Sidecar injection refused").length, 1);
  clock = REFUSAL_LOG_INTERVAL_MS;
  await (await post("{not json")).body?.cancel();
  const lines = log.matching("warn", "Sidecar injection refused");
  assert.equal(lines.length, 2);
  assert.equal(lines[1].fields?.suppressed, 4);
});

/** The injection webhook with the reference's default template and values, as the conformance cases set it. */
function defaultTemplateWebhook() {
  const defaultCase = conformanceCases().find((c) => c.config === "inputs/default.config.yaml")!;
  const state = caseState(defaultCase);
  const metrics = testMetrics();
  const router = injectWebhookRoutes(new Router(), {
    metrics,
    log: new RecordingLogger(),
    state: () => state,
    revision: "default",
  });
  return { router, metrics };
}

Deno.test("A pod whose unquoted annotation carries anchors aliasing each other is refused, not expanded", async () => {
  // The reference's template writes sidecar.mesh.io/bootstrapOverride unquoted, at an indentation of 4 in
  // the rendered YAML: six more lines there stand for 9^7 nodes.
  const { router, metrics } = defaultTemplateWebhook();
  const lines = ['x0: &a0 ["l","l","l","l","l","l","l","l","l"]'];
  for (let i = 1; i <= 6; i++) lines.push(`x${i}: &a${i} [${Array(9).fill(`*a${i - 1}`).join(",")}]`);
  const pod = {
    metadata: {
      name: "laughs",
      annotations: { "sidecar.mesh.io/bootstrapOverride": `cm\n    ${lines.join("\n    ")}` },
    },
    spec: { containers: [{ name: "app", image: "app:1" }] },
  };
  const response = await router.handle(
    new Request("https://webhook.test/inject", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(podReview(pod, "shop")),
    }),
  );
  const review = await response.json();
  assert.equal(review.response.allowed, false);
  assert.match(
    review.response.status.message,
    /^Pod injection failed: Template "sidecar" failed: excessive aliasing: the rendered YAML's \d+ nodes stand for \d+ once its aliases are followed/,
  );
  assert.equal(await counterValue(metrics, "sidecar_injection_failure_total", { type: "inject" }), 1);
});

Deno.test("A pod of more containers than a template may list is refused at once, not copied for seconds", async () => {
  // The reference's template appends every container's name to a list that append copies each time: 50,000
  // containers took 8.5 s, and a 3 MiB review held the injection worker to its 10 s limit.
  const { router, metrics } = defaultTemplateWebhook();
  const pod = (containers: number) => ({
    metadata: { name: "crowded" },
    spec: { containers: Array.from({ length: containers }, (_, i) => ({ name: `c${i}`, image: "app:1" })) },
  });
  const review = async (containers: number) =>
    (await (await router.handle(
      new Request("https://webhook.test/inject", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(podReview(pod(containers), "shop")),
      }),
    )).json()).response;
  assert.equal((await review(50)).allowed, true);
  const refused = await review(10_001);
  assert.equal(refused.allowed, false);
  assert.equal(
    refused.status.message,
    'Pod injection failed: Template "sidecar" failed: inputs/default.config.yaml: template "sidecar":2: append: ' +
      "the list already has 10000 items, as many as a template may build (10000)",
  );
  assert.equal(await counterValue(metrics, "sidecar_injection_failure_total", { type: "inject" }), 1);
});
