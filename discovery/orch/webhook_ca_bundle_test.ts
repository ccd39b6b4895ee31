import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import FakeTimers from "@sinonjs/fake-timers";
import { DUTIES, soleLeader } from "@mesh/shared/lifecycle/duty_gate";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { timersOf } from "@mesh/shared/testing/fake_timers";
import { type ApiObject, OrchApiServer } from "@mesh/shared/testing/orch_api_server";
import { waitFor } from "@mesh/shared/testing/wait_for";
import { clientOf, stored, SwitchableGate } from "./_test_writers.ts";
import { WebhookCaBundleController } from "./webhook_ca_bundle.ts";

const ROOT_A = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
const ROOT_B = "-----BEGIN CERTIFICATE-----\nBBBB\n-----END CERTIFICATE-----\n";
const b64 = (text: string) => Buffer.from(text).toString("base64");
const GROUP = "/apis/admissionregistration.k8s.io/v1";

function webhookConfig(kind: string, name: string, caBundle: string, failurePolicy = "Fail"): ApiObject {
  const webhook = (hook: string) => ({
    name: hook,
    clientConfig: { service: { name: "meshd", namespace: "mesh-system", path: "/validate" }, caBundle },
    rules: [{
      operations: ["CREATE"],
      apiGroups: ["networking.mesh.io"],
      apiVersions: ["*"],
      resources: ["*"],
    }],
    failurePolicy,
    sideEffects: "None",
    admissionReviewVersions: ["v1"],
  });
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind,
    metadata: { name },
    webhooks: [webhook("one.mesh.io"), webhook("two.mesh.io")],
  };
}

type Hooks = { webhooks: { clientConfig: { caBundle?: string }; failurePolicy: string }[] };

async function hooksOf(api: OrchApiServer, plural: string, name: string): Promise<Hooks | undefined> {
  return await stored(api, `${GROUP}/${plural}/${name}`) as unknown as Hooks | undefined;
}

Deno.test("The validating webhook configuration gets the roots as caBundle, Ignore until ready, then Fail", async () => {
  const api = OrchApiServer.start();
  const dir = await Deno.makeTempDir({ prefix: "mesh_webhook_ca_" });
  const clock = FakeTimers.createClock();
  const metrics = new Metrics("discovery", { version: "test", tag: "test" });
  let ready = false;
  let roots = ROOT_A;
  const controller = new WebhookCaBundleController({
    ...await clientOf(api, dir),
    timers: timersOf(clock),
    kind: "ValidatingWebhookConfiguration",
    name: "meshd-mesh-system",
    gate: soleLeader(DUTIES.validationController),
    caBundlePem: () => roots,
    failClosed: () => ready,
    metrics,
  });
  const hooks = () => hooksOf(api, "validatingwebhookconfigurations", "meshd-mesh-system");
  try {
    api.apply(webhookConfig("ValidatingWebhookConfiguration", "meshd-mesh-system", ""));
    api.apply(webhookConfig("ValidatingWebhookConfiguration", "someone-else", "", "Fail"));
    controller.start();
    await waitFor(async () => {
      clock.tick(0);
      return (await hooks())?.webhooks.every((w) => w.clientConfig.caBundle === b64(ROOT_A)) ?? false;
    }, "the caBundle patched at start");
    assert.deepEqual((await hooks())!.webhooks.map((w) => w.failurePolicy), ["Ignore", "Ignore"]);
    const other = await hooksOf(api, "validatingwebhookconfigurations", "someone-else");
    assert.equal(other!.webhooks[0].clientConfig.caBundle, "", "another configuration is left alone");

    ready = true;
    await clock.tickAsync(1_000);
    await waitFor(async () => (await hooks())!.webhooks.every((w) => w.failurePolicy === "Fail"), "Fail");

    // Someone edits the caBundle: the watch sees it and the roots go back.
    api.apply(webhookConfig("ValidatingWebhookConfiguration", "meshd-mesh-system", b64(ROOT_B)));
    await waitFor(
      async () => (await hooks())!.webhooks.every((w) => w.clientConfig.caBundle === b64(ROOT_A)),
      "the edited caBundle restored",
    );
    assert.deepEqual((await hooks())!.webhooks.map((w) => w.failurePolicy), ["Fail", "Fail"]);

    // The roots rotate.
    roots = ROOT_A + ROOT_B;
    controller.rootsChanged();
    await waitFor(
      async () => (await hooks())!.webhooks.every((w) => w.clientConfig.caBundle === b64(ROOT_A + ROOT_B)),
      "the rotated roots",
    );
    const rendered = await metrics.render();
    assert.match(rendered, /config_validation_config_updates(_total)? ([4-9]|\d\d)/);
  } finally {
    await controller.stop();
    await api.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("The mutating webhook configuration is patched once it is created, in every webhook it holds", async () => {
  const api = OrchApiServer.start();
  const dir = await Deno.makeTempDir({ prefix: "mesh_webhook_ca_" });
  const controller = new WebhookCaBundleController({
    ...await clientOf(api, dir),
    kind: "MutatingWebhookConfiguration",
    name: "mesh-sidecar-injector",
    gate: soleLeader(DUTIES.validationController),
    caBundlePem: () => ROOT_A,
  });
  const hooks = () => hooksOf(api, "mutatingwebhookconfigurations", "mesh-sidecar-injector");
  try {
    controller.start();
    await waitFor(() => api.watchCount > 0, "the watch");
    await controller.idle();
    api.apply(webhookConfig("MutatingWebhookConfiguration", "mesh-sidecar-injector", b64(ROOT_B)));
    await waitFor(
      async () => (await hooks())!.webhooks.every((w) => w.clientConfig.caBundle === b64(ROOT_A)),
      "the new configuration patched",
    );
    assert.deepEqual(
      (await hooks())!.webhooks.map((w) => w.failurePolicy),
      ["Fail", "Fail"],
      "policy untouched",
    );
  } finally {
    await controller.stop();
    await api.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("A replica that does not lead the validation controller duty never writes the configuration", async () => {
  const api = OrchApiServer.start();
  const dir = await Deno.makeTempDir({ prefix: "mesh_webhook_ca_" });
  const controller = new WebhookCaBundleController({
    ...await clientOf(api, dir),
    kind: "ValidatingWebhookConfiguration",
    name: "meshd-mesh-system",
    gate: new SwitchableGate(DUTIES.validationController),
    caBundlePem: () => ROOT_A,
    failClosed: () => true,
  });
  try {
    api.apply(webhookConfig("ValidatingWebhookConfiguration", "meshd-mesh-system", ""));
    controller.start();
    controller.rootsChanged();
    await controller.idle();
    const hooks = await hooksOf(api, "validatingwebhookconfigurations", "meshd-mesh-system");
    assert.equal(hooks!.webhooks[0].clientConfig.caBundle, "");
    assert.ok(!api.requests.some((r) => r.startsWith("PUT")), "no write");
  } finally {
    await controller.stop();
    await api.close();
    await Deno.remove(dir, { recursive: true });
  }
});
