import "reflect-metadata";
import assert from "node:assert/strict";
import * as grpc from "@grpc/grpc-js";
import { GrpcAdmission } from "./grpc_admission.ts";
import { EchoTestClient, startEchoServer, TEST_ADMISSION_SETTINGS } from "./_test_echo_service.ts";
import { waitFor } from "../testing/wait_for.ts";
import { CALL_WEIGHT_BYTES, TrafficMeter } from "../process/traffic_meter.ts";

Deno.test("startGrpcServer tells its traffic meter every request's size and every call's end, refused ones too", async () => {
  const traffic = new TrafficMeter();
  const admission = new GrpcAdmission(
    {
      maxConnections: 10,
      maxConnectionsPerPeer: 10,
      maxStreams: 1,
      maxStreamsPerPeer: 1,
      connectionRatePerPeer: 100,
    },
    TEST_ADMISSION_SETTINGS,
  );
  const { server, holds } = await startEchoServer({ traffic, admission });
  const client = new EchoTestClient(server.address);
  try {
    await client.unary("Echo", new Uint8Array(1_000));
    await client.unary("Echo", new Uint8Array(3_000));
    await waitFor(() => traffic.total === 4_000 + 2 * CALL_WEIGHT_BYTES, "two calls counted");
    const held = client.hold();
    await waitFor(() => holds.open === 1, "one stream held");
    const refused = await new Promise<number>((resolve) =>
      client.hold().on("status", (status: grpc.StatusObject) => resolve(status.code))
    );
    assert.equal(refused, grpc.status.RESOURCE_EXHAUSTED);
    await waitFor(() => traffic.total === 4_000 + 3 * CALL_WEIGHT_BYTES, "the refused call counted");
    held.end();
    held.cancel();
    await waitFor(
      () => traffic.total === 4_000 + 4 * CALL_WEIGHT_BYTES,
      "the held call counted once it ended",
    );
  } finally {
    client.close();
    await server.close();
  }
});
