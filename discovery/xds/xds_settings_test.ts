import assert from "node:assert/strict";
import { EnvSettings } from "@mesh/shared/env/env_settings";
import { MAX_DURATION_NS } from "@mesh/shared/flags/duration";
import { grpcChannelOptions, MAX_CONNECTION_AGE_GRACE_MS } from "@mesh/shared/grpc/grpc_channel_options";
import { grpcKeepalive, grpcLimits, xdsSettingsFromEnv } from "./xds_settings.ts";

Deno.test("xdsSettingsFromEnv reads the registry's variables", async (t) => {
  await t.step("defaults", () => {
    const settings = xdsSettingsFromEnv(new EnvSettings("discovery", {}));
    assert.equal(settings.pushThrottle, 100);
    assert.equal(settings.sendTimeoutMs, 5_000);
    assert.equal(settings.cacheEnabled, true);
    assert.equal(settings.cacheSize, 20_000);
    assert.equal(settings.distributionTracking, true);
    assert.equal(settings.distributionRetentionMs, 60_000);
    assert.equal(settings.maxConcurrentStreams, 100);
    assert.equal(settings.maxReceiveMessageBytes, 4_194_304);
    assert.equal(settings.adminEndpoints, false);
    assert.deepEqual(
      [settings.maxNameLength, settings.maxNamesPerStream, settings.maxNameCharsPerConnection],
      [2048, 100_000, 33_554_432],
    );
  });
  await t.step("set values", () => {
    const settings = xdsSettingsFromEnv(
      new EnvSettings("discovery", {
        DISCOVERY_PUSH_THROTTLE: "7",
        DISCOVERY_XDS_SEND_TIMEOUT: "250ms",
        DISCOVERY_XDS_CACHE_SIZE: "0",
        ENABLE_ADMIN_ENDPOINTS: "true",
      }),
    );
    assert.deepEqual([settings.pushThrottle, settings.sendTimeoutMs, settings.cacheSize], [7, 250, 0]);
    assert.equal(settings.adminEndpoints, true);
  });
  await t.step("the name limits are read, and one below 1 is refused with the variable's name", () => {
    const settings = xdsSettingsFromEnv(
      new EnvSettings("discovery", {
        DISCOVERY_XDS_MAX_NAME_LENGTH: "300",
        DISCOVERY_XDS_MAX_NAMES_PER_STREAM: "5000",
        DISCOVERY_XDS_MAX_NAME_CHARS_PER_CONNECTION: "1000000",
      }),
    );
    assert.deepEqual(
      [settings.maxNameLength, settings.maxNamesPerStream, settings.maxNameCharsPerConnection],
      [300, 5000, 1_000_000],
    );
    for (
      const name of [
        "DISCOVERY_XDS_MAX_NAME_LENGTH",
        "DISCOVERY_XDS_MAX_NAMES_PER_STREAM",
        "DISCOVERY_XDS_MAX_NAME_CHARS_PER_CONNECTION",
      ]
    ) {
      assert.throws(
        () => xdsSettingsFromEnv(new EnvSettings("discovery", { [name]: "0" })),
        new RegExp(`${name}="0" is out of range: expected a value from 1`),
      );
    }
  });
  await t.step("a throttle below 1 is refused with the variable's name", () => {
    assert.throws(
      () => xdsSettingsFromEnv(new EnvSettings("discovery", { DISCOVERY_PUSH_THROTTLE: "0" })),
      /DISCOVERY_PUSH_THROTTLE="0" is out of range: expected a value from 1/,
    );
  });
});

Deno.test("the keepalive flags and MESH_GPRC_* limits map to the shared gRPC server's options", async (t) => {
  const limits = { maxConcurrentStreams: 10, maxReceiveMessageBytes: 1024 };
  await t.step("the default (forever) connection age sets no age", () => {
    const options = grpcChannelOptions(
      grpcKeepalive({ intervalMs: 30_000, timeoutMs: 10_000, maxConnectionAgeNs: MAX_DURATION_NS }),
      grpcLimits(limits),
    );
    assert.equal(options["grpc.keepalive_time_ms"], 30_000);
    assert.equal(options["grpc.keepalive_timeout_ms"], 10_000);
    assert.equal(options["grpc.max_concurrent_streams"], 10);
    assert.equal(options["grpc.max_receive_message_length"], 1024);
    assert.equal(options["grpc.max_connection_age_ms"], undefined);
  });
  await t.step("a finite age closes connections gracefully", () => {
    const options = grpcChannelOptions(
      grpcKeepalive({ intervalMs: 1, timeoutMs: 1, maxConnectionAgeNs: 30n * 60n * 1_000_000_000n }),
      grpcLimits(limits),
    );
    assert.equal(options["grpc.max_connection_age_ms"], 1_800_000);
    assert.equal(options["grpc.max_connection_age_grace_ms"], MAX_CONNECTION_AGE_GRACE_MS);
  });
});
