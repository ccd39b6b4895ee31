import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { loadEnvoySchema } from "@mesh/proto/envoy_schema";
import { silentLogger } from "@mesh/shared/log/logger";
import { timersOf } from "@mesh/shared/testing/fake_timers";
import { waitFor } from "@mesh/shared/testing/wait_for";
import { SNAPSHOT_WRITE_MS, XdsSnapshotWriter } from "./xds_snapshot.ts";

const CLUSTER = "type.googleapis.com/envoy.config.cluster.v3.Cluster";

function response(version: string): Uint8Array {
  const type = loadEnvoySchema().lookupType("envoy.service.discovery.v3.DiscoveryResponse");
  return type.encode(type.create({ version_info: version, nonce: `n${version}`, type_url: CLUSTER }))
    .finish();
}

Deno.test("The xDS snapshot is written once per pacing period on the injected clock, with the latest response", async () => {
  const dir = await Deno.makeTempDir({ prefix: "xds_snapshot_" });
  const clock = FakeTimers.createClock(0);
  const path = `${dir}/snapshot.json`;
  const writer = new XdsSnapshotWriter(path, silentLogger, timersOf(clock));
  try {
    writer.record(response("1"));
    writer.record(response("2"));
    assert.equal(clock.countTimers(), 1, "one write pending for both responses");
    clock.tick(SNAPSHOT_WRITE_MS);
    await waitFor(async () => {
      const text = await Deno.readTextFile(path).catch(() => "");
      return text !== "" && JSON.parse(text)[CLUSTER]?.version_info === "2";
    }, "the paced write");
    assert.equal(clock.countTimers(), 0);
  } finally {
    await writer.flush();
    await Deno.remove(dir, { recursive: true });
  }
});
