import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import * as k8s from "@kubernetes/client-node";
import { kubeconfigFor, OrchApiServer } from "@mesh/shared/testing/orch_api_server";
import { readCaCertsSecret } from "./ca_certs_secret.ts";
import { orchHttp } from "./orch_http.ts";

function httpOf(kubeconfig: string) {
  const config = new k8s.KubeConfig();
  config.loadFromString(kubeconfig);
  return orchHttp(config, 2_000);
}

Deno.test("The cacerts Secret is read decoded, key by key; a missing Secret is no CA, an unreachable API server an error naming it", async () => {
  const api = OrchApiServer.start();
  try {
    const http = httpOf(api.kubeconfig());
    assert.equal(await readCaCertsSecret(http, "mesh-system"), undefined);
    api.apply({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "cacerts", namespace: "mesh-system" },
      data: { "root-cert.pem": Buffer.from("ROOT").toString("base64") },
    });
    assert.deepEqual(await readCaCertsSecret(http, "mesh-system"), {
      source: 'Secret "mesh-system/cacerts"',
      files: { "root-cert.pem": "ROOT" },
    });
  } finally {
    await api.close();
  }
  const gone = OrchApiServer.start();
  const url = gone.url;
  await gone.close();
  await assert.rejects(
    () => readCaCertsSecret(httpOf(kubeconfigFor(url)), "mesh-system"),
    /^Error: Cannot read Secret "mesh-system\/cacerts" for USE_REMOTE_CERTS from the orchestrator: GET /,
  );
});
