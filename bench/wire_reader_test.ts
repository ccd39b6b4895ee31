import assert from "node:assert/strict";
import { encodeAny } from "../proto/any_codec.ts";
import { frameDeltaDiscoveryResponse, frameDiscoveryResponse } from "../proto/discovery_frame.ts";
import { TYPE_URL } from "../proto/type_urls.ts";
import { readAnyResources, readEdsServiceNames, readResourceNames, readResponseHead } from "./wire_reader.ts";

const clusters = ["outbound|8080||a.ns.svc.cluster.local", "outbound|8080|v1|a.ns.svc.cluster.local"].map((
  name,
) => encodeAny(TYPE_URL.cluster, { name, type: "EDS", connect_timeout: { seconds: 1 } }));

Deno.test("readResponseHead reads the version, type, nonce and count of a state-of-the-world response", () => {
  const bytes = frameDiscoveryResponse({
    version_info: "v7",
    resources: clusters,
    type_url: TYPE_URL.cluster,
    nonce: "n3",
  });
  assert.deepEqual(readResponseHead(bytes, false), {
    version: "v7",
    typeUrl: TYPE_URL.cluster,
    nonce: "n3",
    resourceCount: 2,
    removed: [],
  });
});

Deno.test("readResourceNames reads each resource's name from its Any without decoding the rest", () => {
  const bytes = frameDiscoveryResponse({
    version_info: "v7",
    resources: clusters,
    type_url: TYPE_URL.cluster,
    nonce: "n3",
  });
  assert.deepEqual(readResourceNames(bytes, false), [
    "outbound|8080||a.ns.svc.cluster.local",
    "outbound|8080|v1|a.ns.svc.cluster.local",
  ]);
  assert.deepEqual(readAnyResources(bytes).map((b) => b.length), clusters.map((c) => c.length));
});

Deno.test("the reader handles delta responses: resource names, removals and the system version", () => {
  const bytes = frameDeltaDiscoveryResponse({
    system_version_info: "s1",
    resources: [{ name: "r1", version: "x", resource: clusters[0] }],
    type_url: TYPE_URL.cluster,
    removed_resources: ["gone"],
    nonce: "n9",
  });
  const head = readResponseHead(bytes, true);
  assert.equal(head.version, "s1");
  assert.equal(head.nonce, "n9");
  assert.equal(head.resourceCount, 1);
  assert.deepEqual(head.removed, ["gone"]);
  assert.deepEqual(readResourceNames(bytes, true), ["r1"]);
});

Deno.test("readEdsServiceNames asks EDS only for EDS clusters, by service name when one is set", () => {
  const mixed = [
    encodeAny(TYPE_URL.cluster, {
      name: "BlackHoleCluster",
      type: "STATIC",
      connect_timeout: { seconds: 1 },
    }),
    encodeAny(TYPE_URL.cluster, {
      name: "outbound|80||a.ns.svc.cluster.local",
      type: "EDS",
      eds_cluster_config: { eds_config: { ads: {} } },
    }),
    encodeAny(TYPE_URL.cluster, {
      name: "outbound_.80_._.a.ns.svc.cluster.local",
      type: "EDS",
      eds_cluster_config: { eds_config: { ads: {} }, service_name: "outbound|80||a.ns.svc.cluster.local" },
    }),
    encodeAny(TYPE_URL.cluster, { name: "PassthroughCluster", type: "ORIGINAL_DST" }),
  ];
  const expected = ["outbound|80||a.ns.svc.cluster.local", "outbound|80||a.ns.svc.cluster.local"];
  const sotw = frameDiscoveryResponse({
    version_info: "v1",
    resources: mixed,
    type_url: TYPE_URL.cluster,
    nonce: "n",
  });
  assert.deepEqual(readEdsServiceNames(sotw, false), expected);
  const delta = frameDeltaDiscoveryResponse({
    system_version_info: "s1",
    resources: mixed.map((resource, i) => ({ name: `c${i}`, version: "x", resource })),
    type_url: TYPE_URL.cluster,
    nonce: "n",
  });
  assert.deepEqual(readEdsServiceNames(delta, true), expected);
});

Deno.test("a truncated response is refused rather than misread", () => {
  const bytes = frameDiscoveryResponse({
    version_info: "v7",
    resources: clusters,
    type_url: TYPE_URL.cluster,
    nonce: "n3",
  });
  assert.throws(() => readResponseHead(bytes.subarray(0, bytes.length - 3), false), RangeError);
});
