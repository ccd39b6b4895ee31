import assert from "node:assert/strict";
import { Router } from "@mesh/shared/http/router";
import { REFUSAL_LOG_INTERVAL_MS, validationWebhookRoutes } from "./validation_webhook.ts";
import {
  admissionReview,
  counterValue,
  INVALID_SPEC,
  testMetrics,
  VALID_SPEC,
  virtualService,
} from "./_test_support.ts";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";

function setup(now?: () => number) {
  const metrics = testMetrics();
  const log = new RecordingLogger();
  const router = validationWebhookRoutes(new Router(), { metrics, log, ...(now && { now }) });
  // A byte body, because a string body makes Request add "text/plain" when no content type is given.
  const post = (body: string, headers: Record<string, string> = { "content-type": "application/json" }) =>
    router.handle(
      new Request("https://meshd/validate", {
        method: "POST",
        body: new TextEncoder().encode(body),
        headers,
      }),
    );
  return { metrics, log, router, post };
}

Deno.test("validationWebhookRoutes registers /validate and /admitpilot for POST", () => {
  const { router } = setup();
  assert.deepEqual(router.routes().map((r) => [r.path, r.methods]), [
    ["/admitpilot", ["POST"]],
    ["/validate", ["POST"]],
  ]);
});

Deno.test("Validation webhook handler checks the HTTP envelope before the review", async (t) => {
  await t.step("a JSON content type with parameters is accepted", async () => {
    const { post } = setup();
    const response = await post(JSON.stringify(admissionReview(virtualService(VALID_SPEC))), {
      "content-type": "application/json; charset=utf-8",
    });
    assert.equal(response.status, 200);
    assert.equal((await response.json()).response.allowed, true);
  });
  await t.step("no content type is 415, counted and logged", async () => {
    const { post, metrics, log } = setup();
    const response = await post(JSON.stringify(admissionReview({})), {});
    assert.equal(response.status, 415);
    assert.equal((await response.json()).error, "Unsupported content type: expected application/json");
    assert.equal(await counterValue(metrics, "config_validation_http_error", { status: "415" }), 1);
    assert.deepEqual(log.lines.map((l) => [l.level, l.msg]), [[
      "warn",
      "Rejected validation webhook request",
    ]]);
  });
  await t.step("the content type is checked before the body, so an empty text body is 415", async () => {
    const { post, metrics } = setup();
    const response = await post("  \n", { "content-type": "text/plain" });
    assert.equal(response.status, 415);
    await response.body?.cancel();
    assert.equal(await counterValue(metrics, "config_validation_http_error", { status: "400" }), 0);
    assert.equal(await counterValue(metrics, "config_validation_http_error", { status: "415" }), 1);
  });
  await t.step("an empty JSON body is 400", async () => {
    const { post, metrics } = setup();
    const response = await post("  \n", { "content-type": "application/json" });
    assert.equal(response.status, 400);
    await response.body?.cancel();
    assert.equal(await counterValue(metrics, "config_validation_http_error", { status: "400" }), 1);
  });
});

Deno.test("Malformed validation webhook requests are each counted, and logged once per status an interval", async () => {
  let now = 0;
  const { post, metrics, log } = setup(() => now);
  for (let i = 0; i < 200; i++) await (await post(`not json ${i}`)).body?.cancel();
  for (let i = 0; i < 50; i++) await (await post("{}", {})).body?.cancel();
  assert.equal(await counterValue(metrics, "config_validation_http_error", { status: "400" }), 200);
  assert.equal(await counterValue(metrics, "config_validation_http_error", { status: "415" }), 50);
  assert.deepEqual(log.lines.map((l) => [l.msg, l.fields?.status]), [
    ["Rejected validation webhook request", 400],
    ["Rejected validation webhook request", 415],
  ]);
  now = REFUSAL_LOG_INTERVAL_MS;
  await (await post("not json again")).body?.cancel();
  assert.equal(log.lines.at(-1)?.fields?.suppressed, 199, "the next line says how many were passed over");
});

Deno.test("Every denial is answered and counted; the log gets one line per reason an interval", async () => {
  let now = 0;
  const { post, metrics, log } = setup(() => now);
  for (let i = 0; i < 100; i++) {
    const review = admissionReview(virtualService(INVALID_SPEC));
    assert.equal((await (await post(JSON.stringify(review))).json()).response.allowed, false);
  }
  assert.equal(await counterValue(metrics, "config_validation_failed", { reason: "invalid_config" }), 100);
  assert.equal(log.lines.filter((l) => l.msg === "Denied configuration").length, 1);
  now = REFUSAL_LOG_INTERVAL_MS;
  await (await post(JSON.stringify(admissionReview(virtualService(INVALID_SPEC))))).body?.cancel();
  assert.equal(log.lines.at(-1)?.fields?.suppressed, 99);
});

Deno.test("Validation webhook handler counts and logs each decision", async (t) => {
  const { post, metrics, log } = setup();
  const send = async (object: unknown, operation = "CREATE") =>
    (await (await post(JSON.stringify(admissionReview(object, { operation })))).json()).response;
  const vs = { group: "networking.istio.io", version: "v1beta1", resource: "virtualservices" };

  await t.step("a denial is logged at info with the message", async () => {
    assert.equal((await send(virtualService(INVALID_SPEC))).allowed, false);
    const line = log.lines.find((l) => l.msg === "Denied configuration");
    assert.equal(line?.level, "info");
    assert.equal(line?.fields?.reason, "invalid_config");
    assert.match(String(line?.fields?.error), /spec\.http\[0\]\.route\[1\]\.weight/);
  });
  await t.step("objects of other groups are denied and counted as an unknown type", async () => {
    assert.equal(
      (await send({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } })).allowed,
      false,
    );
    const { values: passed } = await metrics.counter("config_validation_passed").get();
    assert.deepEqual(passed, []);
    assert.equal(await counterValue(metrics, "config_validation_failed", { reason: "unknown_type" }), 1);
  });
  await t.step("passes and failures carry group, version, resource (and reason)", async () => {
    await send(virtualService(VALID_SPEC));
    await send(virtualService(VALID_SPEC), "UPDATE");
    await send(virtualService(VALID_SPEC), "DELETE");
    assert.equal(await counterValue(metrics, "config_validation_passed", vs), 2);
    assert.equal(
      await counterValue(metrics, "config_validation_failed", { ...vs, reason: "invalid_config" }),
      1,
    );
    assert.equal(
      await counterValue(metrics, "config_validation_failed", { ...vs, reason: "unsupported_operation" }),
      1,
    );
  });
});

Deno.test("A VirtualService carrying one host 20,000 times is denied with an error per copy, not per pair", async () => {
  // Every overlapping pair was an error: 6,000 copies (96 KB) were 18 million of them, and the server's heap
  // ran out in the worker, which ends the whole process.
  const { post } = setup();
  const http = [{ route: [{ destination: { host: "reviews" } }] }];
  const review = JSON.stringify(
    admissionReview(virtualService({ hosts: Array(20_000).fill("reviews.shop.svc.cluster.local"), http })),
  );
  const denied = (await (await post(review)).json()).response;
  assert.equal(denied.allowed, false);
  assert.match(
    denied.status.message,
    /\(19999 errors\): spec\.hosts\[1\]: duplicate hosts in virtual service: "reviews\.shop\.svc\.cluster\.local" and "reviews\.shop\.svc\.cluster\.local" overlap/,
  );
});

Deno.test("An EnvoyFilter nested past 100 levels is denied, naming where", async () => {
  // Admitted before: the orchestrator then fed it to a store whose copy threw, which ended the server.
  const { post } = setup();
  let value: unknown = "x";
  for (let i = 0; i < 3_000; i++) value = { a: value };
  const review = admissionReview({
    apiVersion: "networking.istio.io/v1alpha3",
    kind: "EnvoyFilter",
    metadata: { name: "deep", namespace: "default" },
    spec: {
      configPatches: [{ applyTo: "CLUSTER", patch: { operation: "MERGE", value: { metadata: value } } }],
    },
  });
  const denied = (await (await post(JSON.stringify(review))).json()).response;
  assert.equal(denied.allowed, false);
  assert.match(
    denied.status.message,
    /metadata(\.a){94}: nested more than 100 levels deep; at most 100 are accepted/,
  );
});

Deno.test("Reviews carrying ten thousand regexes are each checked, and the next regex route admitted", async () => {
  const { post } = setup();
  const route = (i: number, regex: string) => ({
    match: [{ uri: { regex } }],
    route: [{ destination: { host: `reviews-${i}` } }],
  });
  const review = (http: unknown[]) =>
    JSON.stringify(admissionReview(virtualService({ hosts: ["reviews"], http })));
  const valid = Array.from({ length: 10_000 }, (_, i) => route(i, `^/tenant-${i}/(a|b)+[0-9]{2,4}$`));
  const allowed = (await (await post(review(valid))).json()).response;
  assert.equal(allowed.allowed, true, allowed.status?.message?.slice(0, 300));
  const invalid = Array.from({ length: 10_000 }, (_, i) => route(i, `(unclosed-${i}`));
  const denied = (await (await post(review(invalid))).json()).response;
  assert.match(
    denied.status.message,
    /\(10000 errors\): spec\.http\[0\]\.match\[0\]\.uri\.regex: invalid RE2 regex "\(unclosed-0": missing \)/,
  );
  const next = (await (await post(review([route(0, "^/api/v[0-9]+/.*$")]))).json()).response;
  assert.equal(next.allowed, true, next.status?.message?.slice(0, 300));
});
