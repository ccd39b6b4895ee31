import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { selfSignedServingCert } from "@mesh/shared/pki/serving_certificate";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { OrchApiServer } from "@mesh/shared/testing/orch_api_server";
import { clientOf, stored } from "./_test_writers.ts";
import { invalidConfigProbe } from "./invalid_config_probe.ts";

/** A webhook over TLS that denies every review, as the validation webhook denies a Gateway without servers. */
async function denyingWebhook() {
  const tls = await selfSignedServingCert(["localhost"]);
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert: tls.certPem, key: tls.keyPem, onListen() {} },
    async (request) => {
      const review = await request.json();
      return Response.json({
        apiVersion: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        response: {
          uid: review.request.uid,
          allowed: false,
          status: { message: "gateway must have at least one server" },
        },
      });
    },
  );
  return { server, caPem: tls.caPem, url: `https://localhost:${server.addr.port}` };
}

function validatingConfig(caBundlePem: string) {
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name: "meshd-mesh-system" },
    webhooks: [{
      name: "validation.mesh.io",
      clientConfig: {
        service: { name: "meshd", namespace: "mesh-system", path: "/validate" },
        caBundle: Buffer.from(caBundlePem).toString("base64"),
      },
      rules: [{
        operations: ["CREATE", "UPDATE"],
        apiGroups: ["networking.mesh.io"],
        apiVersions: ["*"],
        resources: ["*"],
      }],
      failurePolicy: "Ignore",
      sideEffects: "None",
      admissionReviewVersions: ["v1"],
    }],
  };
}

Deno.test("The fail-closed probe passes only once the orchestrator's admission denies invalid config", async () => {
  const api = OrchApiServer.start();
  const webhook = await denyingWebhook();
  const other = await selfSignedServingCert(["localhost"]);
  const dir = await Deno.makeTempDir({ prefix: "mesh_probe_" });
  const log = new RecordingLogger();
  try {
    const probe = invalidConfigProbe({ ...await clientOf(api, dir), log }, "mesh-system");
    assert.equal(await probe(), false, "no webhook registered: the dry run passes");
    assert.equal(
      await stored(api, "/apis/networking.mesh.io/v1alpha3/namespaces/mesh-system/gateways/invalid-gateway"),
      undefined,
      "a dry run stores nothing",
    );

    api.validating.serve("mesh-system/meshd", webhook.url);
    api.apply(validatingConfig(other.caPem));
    assert.equal(
      await probe(),
      false,
      "a caBundle that does not verify the webhook: the call fails and is ignored",
    );
    assert.deepEqual(api.validating.calls, ["validation.mesh.io failed"]);

    api.apply(validatingConfig(webhook.caPem));
    assert.equal(await probe(), true);
    assert.deepEqual(api.validating.calls.at(-1), "validation.mesh.io denied");
    const calls = api.validating.calls.length;
    assert.equal(await probe(), true, "once passed, it stays passed");
    assert.equal(api.validating.calls.length, calls, "without asking again");
    assert.deepEqual(
      log.lines.map((l) => l.msg).filter((m) => m.startsWith("not ready")),
      ["not ready to switch validation to fail-closed"],
      "the same reason is logged once",
    );
  } finally {
    await webhook.server.shutdown();
    await api.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Without Gateways served by the orchestrator, the fail-closed probe passes as the reference assumes", async () => {
  const api = OrchApiServer.start({ absentGroups: ["networking.mesh.io"] });
  const dir = await Deno.makeTempDir({ prefix: "mesh_probe_" });
  try {
    const probe = invalidConfigProbe(await clientOf(api, dir), "mesh-system");
    assert.equal(await probe(), true);
  } finally {
    await api.close();
    await Deno.remove(dir, { recursive: true });
  }
});
