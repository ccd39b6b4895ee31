import "reflect-metadata";
import assert from "node:assert/strict";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { createSelfSignedCa } from "@mesh/shared/pki";
import { CaClient } from "./ca_client.ts";

async function total(metrics: Metrics, name: string): Promise<number> {
  const { values } = await metrics.counter(name).get();
  return values.filter((v) => v.labels.request_type === "csr").reduce((sum, v) => sum + v.value, 0);
}

Deno.test("CaClient counts requests, failures and the retries that follow a failure", async () => {
  const ca = await createSelfSignedCa({ org: "cluster.local", ttlMs: 3_600_000, keyAlgorithm: "ECDSA" });
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const metrics = new Metrics("agent", { version: "test", tag: "test" });
  const client = new CaClient({
    address: `127.0.0.1:${port}`,
    rootPem: ca.certificatePem,
    token: () => Promise.resolve(undefined),
    metrics,
  });
  try {
    await assert.rejects(() => client.sign("csr", 60));
    assert.equal(await total(metrics, "num_outgoing_requests"), 1);
    assert.equal(await total(metrics, "num_failed_outgoing_requests"), 1);
    assert.equal(await total(metrics, "num_outgoing_retries"), 0);
    await assert.rejects(() => client.sign("csr", 60));
    assert.equal(await total(metrics, "num_outgoing_requests"), 2);
    assert.equal(await total(metrics, "num_outgoing_retries"), 1, "the second request follows a failure");
    assert.ok(await total(metrics, "outgoing_latency") >= 0);
  } finally {
    client.close();
  }
});
