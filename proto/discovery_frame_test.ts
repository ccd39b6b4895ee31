import assert from "node:assert/strict";
import { encodeAny } from "./any_codec.ts";
import {
  encodeDeltaResource,
  frameDeltaDiscoveryResponse,
  frameDiscoveryResponse,
  frameResourceRun,
} from "./discovery_frame.ts";
import { loadEnvoySchema } from "./envoy_schema.ts";
import { TYPE_URL } from "./type_urls.ts";

// deno-lint-ignore no-explicit-any -- assertions read decoded trees by path
type Tree = Record<string, any>;

const root = loadEnvoySchema();
const DiscoveryResponse = root.lookupType("envoy.service.discovery.v3.DiscoveryResponse");
const DeltaDiscoveryResponse = root.lookupType("envoy.service.discovery.v3.DeltaDiscoveryResponse");
const Any = root.lookupType("google.protobuf.Any");

const clusterA = encodeAny(TYPE_URL.cluster, { name: "a", type: "EDS", connect_timeout: { seconds: 1 } });
// Large enough that its length prefix takes three varint bytes.
const clusterB = encodeAny(TYPE_URL.cluster, { name: "b".repeat(20_000), type: "STRICT_DNS" });

/** What protobufjs writes for the same message, built from the decoded Any objects. */
function protobufjsBytes(type: typeof DiscoveryResponse, object: Record<string, unknown>): Uint8Array {
  return new Uint8Array(type.encode(type.fromObject(object)).finish());
}

const CONVERSION = { longs: String, enums: String, bytes: Array };

Deno.test("frameDiscoveryResponse writes what protobufjs writes for the same response", async (t) => {
  const parts = {
    version_info: "2024-01-01T00:00:00Z/7",
    resources: [clusterA, clusterB],
    type_url: TYPE_URL.cluster,
    nonce: "nonce-é-1",
    canary: true,
    control_plane: { identifier: "meshd-7f9c" },
  };
  const framed = frameDiscoveryResponse(parts);
  await t.step("same bytes", () => {
    assert.deepEqual(
      framed,
      protobufjsBytes(DiscoveryResponse, {
        ...parts,
        resources: parts.resources.map((bytes) => Any.decode(bytes)),
      }),
    );
  });
  await t.step("decodes to the parts, with each Any intact", () => {
    const decoded = DiscoveryResponse.toObject(DiscoveryResponse.decode(framed), CONVERSION) as Tree;
    assert.equal(decoded.version_info, parts.version_info);
    assert.equal(decoded.type_url, parts.type_url);
    assert.equal(decoded.nonce, "nonce-é-1");
    assert.equal(decoded.canary, true);
    assert.deepEqual(decoded.control_plane, { identifier: "meshd-7f9c" });
    assert.equal(decoded.resources.length, 2);
    const second = Any.encode(Any.fromObject(decoded.resources[1])).finish();
    assert.deepEqual(new Uint8Array(second), new Uint8Array(clusterB));
  });
});

Deno.test("frameDiscoveryResponse leaves out proto3 defaults", async (t) => {
  await t.step("an empty response is zero bytes", () => {
    assert.equal(
      frameDiscoveryResponse({ version_info: "", resources: [], type_url: "", nonce: "" }).length,
      0,
    );
  });
  await t.step("canary false and an empty control plane identifier", () => {
    const framed = frameDiscoveryResponse({
      version_info: "v",
      resources: [],
      type_url: "",
      nonce: "",
      canary: false,
      control_plane: { identifier: "" },
    });
    // version_info = 1 "v", then control_plane = 6 with an empty payload.
    assert.deepEqual(framed, Uint8Array.of(0x0a, 0x01, 0x76, 0x32, 0x00));
  });
  await t.step("an empty resource list decodes as such", () => {
    const framed = frameDiscoveryResponse({
      version_info: "1",
      resources: [],
      type_url: TYPE_URL.route,
      nonce: "n",
    });
    const decoded = DiscoveryResponse.toObject(DiscoveryResponse.decode(framed), { arrays: true });
    assert.deepEqual(decoded, { resources: [], version_info: "1", type_url: TYPE_URL.route, nonce: "n" });
  });
});

Deno.test("frameDeltaDiscoveryResponse writes what protobufjs writes for the same response", async (t) => {
  const parts = {
    system_version_info: "sys-3",
    resources: [
      {
        name: "a",
        version: "v1",
        resource: clusterA,
        aliases: ["alias-1", "alias-2"],
        ttl: { seconds: 30, nanos: 500 },
        cache_control: { do_not_cache: true },
      },
      { name: "b".repeat(200), version: "v2", resource: clusterB, ttl: { seconds: 2n ** 40n } },
      {
        name: "heartbeat",
        version: "v3",
        ttl: { seconds: 0, nanos: 1 },
        cache_control: { do_not_cache: false },
      },
    ],
    type_url: TYPE_URL.cluster,
    removed_resources: ["gone-1", "", "gone-2"],
    nonce: "n-42",
    control_plane: { identifier: "meshd" },
  };
  const framed = frameDeltaDiscoveryResponse(parts);
  await t.step("same bytes", () => {
    const expected = protobufjsBytes(DeltaDiscoveryResponse, {
      ...parts,
      resources: [
        { ...parts.resources[0], resource: Any.decode(clusterA) },
        { ...parts.resources[1], resource: Any.decode(clusterB), ttl: { seconds: String(2n ** 40n) } },
        { name: "heartbeat", version: "v3", ttl: { nanos: 1 }, cache_control: {} },
      ],
    });
    assert.deepEqual(framed, expected);
  });
  await t.step("decodes to the parts", () => {
    const decoded = DeltaDiscoveryResponse.toObject(
      DeltaDiscoveryResponse.decode(framed),
      CONVERSION,
    ) as Tree;
    assert.equal(decoded.system_version_info, "sys-3");
    assert.deepEqual(decoded.removed_resources, ["gone-1", "", "gone-2"]);
    assert.equal(decoded.nonce, "n-42");
    assert.deepEqual(decoded.control_plane, { identifier: "meshd" });
    assert.deepEqual(decoded.resources[0].aliases, ["alias-1", "alias-2"]);
    assert.deepEqual(decoded.resources[0].ttl, { seconds: "30", nanos: 500 });
    assert.deepEqual(decoded.resources[0].cache_control, { do_not_cache: true });
    assert.deepEqual(decoded.resources[1].ttl, { seconds: String(2n ** 40n) });
    assert.equal(decoded.resources[2].resource, undefined);
    assert.deepEqual(decoded.resources[2].cache_control, {});
  });
});

Deno.test("A resource run framed ahead with frameResourceRun frames to the same bytes as the resources", () => {
  const common = { version_info: "1", type_url: TYPE_URL.cluster, nonce: "n" };
  assert.deepEqual(
    frameDiscoveryResponse({
      ...common,
      resources: [],
      resource_run: frameResourceRun([clusterA, clusterB]),
    }),
    frameDiscoveryResponse({ ...common, resources: [clusterA, clusterB] }),
  );
  assert.deepEqual(
    frameDiscoveryResponse({ ...common, resources: [clusterA], resource_run: frameResourceRun([clusterB]) }),
    frameDiscoveryResponse({ ...common, resources: [clusterA, clusterB] }),
  );
});

Deno.test("Resources encoded ahead with encodeDeltaResource frame to the same bytes as their parts", () => {
  const resources = [
    { name: "a", version: "v1", resource: clusterA, ttl: { seconds: 30 } },
    { name: "b", version: "v2", resource: clusterB },
  ];
  const common = { system_version_info: "s", type_url: TYPE_URL.cluster, nonce: "n" };
  assert.deepEqual(
    frameDeltaDiscoveryResponse({
      ...common,
      resources: [],
      encoded_resources: resources.map(encodeDeltaResource),
    }),
    frameDeltaDiscoveryResponse({ ...common, resources }),
  );
  assert.deepEqual(
    frameDeltaDiscoveryResponse({
      ...common,
      resources: [resources[0]],
      encoded_resources: [encodeDeltaResource(resources[1])],
    }),
    frameDeltaDiscoveryResponse({ ...common, resources }),
    "parts first, then what was encoded ahead",
  );
  assert.deepEqual(
    frameDeltaDiscoveryResponse({
      ...common,
      resources: [],
      resource_run: frameResourceRun(resources.map(encodeDeltaResource)),
    }),
    frameDeltaDiscoveryResponse({ ...common, resources }),
    "a run of encoded Resource messages",
  );
});

Deno.test("frameDeltaDiscoveryResponse rejects a negative TTL or out-of-range nanos", () => {
  const frame = (ttl: { seconds: number | bigint; nanos?: number }) =>
    frameDeltaDiscoveryResponse({
      system_version_info: "",
      resources: [{ name: "a", version: "1" }, { name: "b", version: "1", ttl }],
      type_url: TYPE_URL.cluster,
      nonce: "n",
    });
  assert.throws(() => frame({ seconds: -1 }), {
    name: "RangeError",
    message:
      "Invalid resources[1].ttl: expected non-negative integer seconds and nanos in 0..999999999, got " +
      'seconds "-1" and nanos "0"',
  });
  assert.throws(() => frame({ seconds: 1, nanos: 1_000_000_000 }), RangeError);
  assert.throws(() => frame({ seconds: 1.5 }), RangeError);
});
