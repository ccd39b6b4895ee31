import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { selfSignedServingCert } from "../pki/serving_certificate.ts";
import { type ApiObject, OrchApiServer } from "./orch_api_server.ts";

type Review = { request: { uid: string; object: ApiObject } };

/** A TLS webhook that labels what it is sent (`/mutate`) and records what validation sees (`/validate`). */
async function startWebhook() {
  const serving = await selfSignedServingCert(["localhost"]);
  const validated: ApiObject[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert: serving.certPem, key: serving.keyPem, onListen() {} },
    async (request) => {
      const review = await request.json() as Review;
      const path = new URL(request.url).pathname;
      if (path === "/validate") validated.push(review.request.object);
      const patch = [{ op: "add", path: "/metadata/labels", value: { mutated: "yes" } }];
      return Response.json({
        apiVersion: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        response: {
          uid: review.request.uid,
          allowed: true,
          ...(path === "/mutate"
            ? { patchType: "JSONPatch", patch: Buffer.from(JSON.stringify(patch)).toString("base64") }
            : {}),
        },
      });
    },
  );
  return { serving, validated, server, url: `https://localhost:${server.addr.port}` };
}

function configuration(
  kind: string,
  url: string,
  caPem: string,
  extra: Record<string, unknown> = {},
): ApiObject {
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind,
    metadata: { name: kind.toLowerCase() },
    webhooks: [{
      name: `${kind.toLowerCase()}.test`,
      clientConfig: { url, caBundle: Buffer.from(caPem).toString("base64") },
      rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"] }],
      failurePolicy: "Fail",
      ...extra,
    }],
  };
}

Deno.test(
  "The test API server has mutating webhooks patch a write its selectors pick, before validation sees it",
  async () => {
    const webhook = await startWebhook();
    const api = OrchApiServer.start();
    const create = async (namespace: string, name: string, labels: Record<string, string> = {}) => {
      const response = await fetch(`${api.url}/api/v1/namespaces/${namespace}/pods`, {
        method: "POST",
        body: JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name, labels }, spec: {} }),
      });
      return { status: response.status, body: await response.json() };
    };
    try {
      api.apply({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: "on", labels: { inject: "enabled" } },
      });
      api.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: "off" } });
      api.apply(
        configuration("MutatingWebhookConfiguration", `${webhook.url}/mutate`, webhook.serving.caPem, {
          namespaceSelector: { matchLabels: { inject: "enabled" } },
          objectSelector: { matchExpressions: [{ key: "skip", operator: "DoesNotExist" }] },
        }),
      );
      api.apply(
        configuration("ValidatingWebhookConfiguration", `${webhook.url}/validate`, webhook.serving.caPem),
      );

      const picked = await create("on", "a");
      assert.equal(picked.status, 201);
      assert.deepEqual(picked.body.metadata.labels, { mutated: "yes" });
      assert.deepEqual(
        webhook.validated.at(-1)?.metadata.labels,
        { mutated: "yes" },
        "validation sees the patch",
      );

      assert.deepEqual((await create("off", "b")).body.metadata.labels, {}, "namespaceSelector");
      assert.deepEqual(
        (await create("on", "c", { skip: "1" })).body.metadata.labels,
        { skip: "1" },
        "objectSelector",
      );
      assert.deepEqual(api.mutating.calls, ["mutatingwebhookconfiguration.test patched"]);
    } finally {
      await api.close();
      await webhook.server.shutdown();
    }
  },
);

Deno.test(
  "A mutating webhook the caBundle does not verify fails the write under Fail and is skipped under Ignore",
  async () => {
    const webhook = await startWebhook();
    const other = await selfSignedServingCert(["localhost"]);
    const api = OrchApiServer.start();
    const create = (name: string) =>
      fetch(`${api.url}/api/v1/namespaces/default/pods`, {
        method: "POST",
        body: JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name }, spec: {} }),
      });
    try {
      api.apply(configuration("MutatingWebhookConfiguration", `${webhook.url}/mutate`, other.caPem));
      const refused = await create("a");
      assert.equal(refused.status, 500);
      assert.match(
        (await refused.json()).message,
        /failed calling webhook "mutatingwebhookconfiguration\.test"/,
      );
      assert.equal(
        (await fetch(`${api.url}/api/v1/namespaces/default/pods/a`).then((r) => r.json())).code,
        404,
      );

      api.apply(configuration("MutatingWebhookConfiguration", `${webhook.url}/mutate`, other.caPem, {
        failurePolicy: "Ignore",
      }));
      const ignored = await create("b");
      assert.equal(ignored.status, 201);
      assert.equal((await ignored.json()).metadata.labels, undefined);
      assert.deepEqual(api.mutating.calls, [
        "mutatingwebhookconfiguration.test failed",
        "mutatingwebhookconfiguration.test failed",
      ]);
    } finally {
      await api.close();
      await webhook.server.shutdown();
    }
  },
);
