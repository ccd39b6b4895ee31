import assert from "node:assert/strict";
import * as k8s from "@kubernetes/client-node";
import { OrchApiServer } from "@mesh/shared/testing/orch_api_server";
import { limitWatches, loadOrchConfig, OrchConfigError } from "./orch_client.ts";
import { RateLimiter } from "./rate_limiter.ts";

Deno.test("In-cluster, the service account token is read from its file when requests are made, not once", async () => {
  const dir = await Deno.makeTempDir({ prefix: "orch_client_" });
  try {
    await Deno.writeTextFile(`${dir}/token`, "first-token\n");
    await Deno.writeTextFile(`${dir}/ca.crt`, "");
    const kc = loadOrchConfig({ orchConfig: "", serviceHost: "10.96.0.1", serviceAccountDir: dir });
    assert.equal(kc.getCurrentCluster()?.server, "https://10.96.0.1:443");
    assert.equal(kc.getCurrentCluster()?.caFile, `${dir}/ca.crt`);
    await Deno.writeTextFile(`${dir}/token`, "rotated-token\n");
    const options: { headers: Record<string, string> } = { headers: {} };
    await kc.applyToHTTPSOptions(options as never);
    assert.match(options.headers.Authorization ?? options.headers.authorization ?? "", /rotated-token/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("In-cluster without a mounted token is an error naming the file", () => {
  assert.throws(
    () =>
      loadOrchConfig({
        orchConfig: "",
        serviceHost: "10.96.0.1",
        serviceAccountDir: "/tmp/mesh-no-such-account-dir",
      }),
    (error: Error) =>
      error instanceof OrchConfigError &&
      /\/tmp\/mesh-no-such-account-dir\/token does not exist/.test(error.message),
  );
});

Deno.test("limitWatches makes every watch connection wait for the QPS limiter", async () => {
  const api = OrchApiServer.start();
  const dir = await Deno.makeTempDir({ prefix: "orch_client_" });
  try {
    await Deno.writeTextFile(`${dir}/kubeconfig`, api.kubeconfig());
    let acquired = 0;
    const limiter = new RateLimiter(1000, 100);
    const counting = { acquire: () => (acquired++, limiter.acquire()) } as unknown as RateLimiter;
    const kc = limitWatches(loadOrchConfig({ orchConfig: `${dir}/kubeconfig`, serviceHost: "" }), counting);
    const watch = new k8s.Watch(kc);
    const events: string[] = [];
    const request = await watch.watch("/api/v1/pods", {}, (type) => events.push(type), () => {});
    assert.equal(acquired, 1, "the watch connection took a token");
    request.abort();
  } finally {
    await api.close();
    await Deno.remove(dir, { recursive: true });
  }
});
