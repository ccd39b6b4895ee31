import assert from "node:assert/strict";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { XdsMetrics } from "./xds_metrics.ts";

/** The sample lines of `name` in the exposition, without the metric's comments. */
async function samples(metrics: Metrics, name: string): Promise<string[]> {
  return (await metrics.render()).split("\n").filter((line) => line.startsWith(name));
}

Deno.test("XdsMetrics counts each response under its type label, a known type and any other alike", async () => {
  const metrics = new Metrics("discovery", { version: "test", tag: "test" });
  const xds = new XdsMetrics(metrics);
  for (const _ of [1, 2, 3]) {
    xds.pushed(TYPE_URL.endpoint);
    xds.sendTime(TYPE_URL.endpoint, 0.002);
    xds.pushTime(TYPE_URL.endpoint, 0.003);
  }
  xds.pushed(TYPE_URL.cluster);
  xds.pushed("type.example/Unknown");
  xds.sendTime("type.example/Unknown", 0.5);
  xds.pushFailed(TYPE_URL.endpoint, "senderr");
  xds.convergence(0.25);
  xds.convergence(0.5);
  xds.queueTime(0.125);

  assert.deepEqual((await samples(metrics, "discovery_xds_pushes")).sort(), [
    'discovery_xds_pushes{type="cds"} 1',
    'discovery_xds_pushes{type="eds"} 3',
    'discovery_xds_pushes{type="eds_senderr"} 1',
    'discovery_xds_pushes{type="type.example/Unknown"} 1',
  ]);
  const send = await samples(metrics, "discovery_xds_send_time");
  assert.ok(send.includes('discovery_xds_send_time_count{type="eds"} 3'), send.join("\n"));
  assert.ok(send.includes('discovery_xds_send_time_sum{type="eds"} 0.006'), send.join("\n"));
  assert.ok(send.includes('discovery_xds_send_time_count{type="type.example/Unknown"} 1'), send.join("\n"));
  const push = await samples(metrics, "discovery_xds_push_time");
  assert.ok(push.includes('discovery_xds_push_time_count{type="eds"} 3'), push.join("\n"));
  const convergence = await samples(metrics, "discovery_proxy_convergence_time");
  assert.ok(convergence.includes("discovery_proxy_convergence_time_count 2"), convergence.join("\n"));
  assert.ok(convergence.includes("discovery_proxy_convergence_time_sum 0.75"), convergence.join("\n"));
  const queue = await samples(metrics, "discovery_proxy_queue_time");
  assert.ok(queue.includes("discovery_proxy_queue_time_count 1"), queue.join("\n"));
  // A type never sent has no series: binding a type's series ahead adds none to the exposition.
  assert.equal(push.filter((line) => line.includes('type="rds"')).length, 0);
});

Deno.test("XdsMetrics without a registry records nothing and does not fail", () => {
  const xds = new XdsMetrics();
  xds.pushed(TYPE_URL.endpoint);
  xds.sendTime(TYPE_URL.endpoint, 0.1);
  xds.pushTime(TYPE_URL.route, 0.1);
});

Deno.test("XdsMetrics labels a type no generator serves as other, however many a client makes up", async () => {
  const metrics = new Metrics("discovery", { version: "test", tag: "test" });
  const served = new Set([TYPE_URL.cluster, "type.example/Served"]);
  const xds = new XdsMetrics(metrics, undefined, (typeUrl) => served.has(typeUrl));
  for (let i = 0; i < 50; i++) {
    xds.rejected(`type.example/Made${i}`, "proxy-a", 3);
    xds.expiredNonce(`type.example/Made${i}`);
    xds.internalError(`type.example/Made${i}`);
  }
  xds.rejected(TYPE_URL.cluster, "proxy-a", 3);
  xds.expiredNonce("type.example/Served");
  xds.pushError();
  assert.deepEqual((await samples(metrics, "discovery_total_xds_rejects")).sort(), [
    'discovery_total_xds_rejects{type="cds"} 1',
    'discovery_total_xds_rejects{type="other"} 50',
  ]);
  assert.deepEqual((await samples(metrics, "discovery_xds_expired_nonce")).sort(), [
    'discovery_xds_expired_nonce{type="other"} 50',
    'discovery_xds_expired_nonce{type="type.example/Served"} 1',
  ]);
  assert.deepEqual((await samples(metrics, "discovery_total_xds_internal_errors")).sort(), [
    'discovery_total_xds_internal_errors{type="other"} 50',
    'discovery_total_xds_internal_errors{type="push"} 1',
  ]);
});
