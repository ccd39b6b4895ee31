/**
 * Micro-benchmarks of one push's building blocks: encoding a realistic cluster or route configuration with
 * protobufjs (a cache miss), a cache hit including its key, hashing for a delta version, framing a CDS
 * response from cached bytes, and the load client's wire-level read of that response.
 *
 *   deno bench --allow-read --allow-env bench/xds_codec_bench.ts
 *
 * @module
 */
import { encodeAny } from "../proto/any_codec.ts";
import { frameDiscoveryResponse } from "../proto/discovery_frame.ts";
import { TYPE_URL } from "../proto/type_urls.ts";
import { stableJson } from "../discovery/generate/fingerprint.ts";
import { cacheKey } from "../discovery/generate/generator.ts";
import { cluster, type ClusterPlan } from "../discovery/generate/grpc_cds.ts";
import { resourceVersion, VersionedResource } from "../discovery/xds/versioned_resource.ts";
import { XdsCache } from "../discovery/xds/xds_cache.ts";
import { readResourceNames, readResponseHead } from "./wire_reader.ts";

/** A cluster as the gRPC CDS generator builds it for the benchmark mesh's DestinationRule. */
function clusterPlan(i: number): ClusterPlan {
  return {
    name: `outbound|8080|v1|svc-${i % 10}.ns-${
      String(Math.floor(i / 10)).padStart(3, "0")
    }.svc.cluster.local`,
    policy: {
      loadBalancer: { simple: "LEAST_CONN" },
      connectionPool: { http: { http2MaxRequests: 1000, maxRequestsPerConnection: 100 } },
      outlierDetection: { consecutive5xxErrors: 5, interval: "10s", baseEjectionTime: "30s" },
    },
  };
}

/** A route configuration like the benchmark mesh's: a header match and a weighted split with retries. */
function routeConfiguration(host: string): Record<string, unknown> {
  const cluster = (subset: string) => `outbound|8080|${subset}|${host}`;
  return {
    name: `${host}:8080`,
    virtual_hosts: [{
      name: `${host}:8080`,
      domains: [host, `${host}:8080`],
      routes: [
        {
          name: "canary",
          match: { prefix: "", headers: [{ name: "x-canary", string_match: { exact: "1" } }] },
          route: { cluster: cluster("v2") },
        },
        {
          name: "default",
          match: { prefix: "" },
          route: {
            weighted_clusters: {
              clusters: [{ name: cluster("v1"), weight: { value: 90 } }, {
                name: cluster("v2"),
                weight: { value: 10 },
              }],
            },
            timeout: { seconds: 5 },
            max_stream_duration: { grpc_timeout_header_max: { seconds: 5 } },
            retry_policy: {
              retry_on: "unavailable",
              num_retries: { value: 2 },
              per_try_timeout: { seconds: 1 },
            },
          },
        },
      ],
    }],
  };
}

const plans = Array.from({ length: 3000 }, (_, i) => clusterPlan(i));
const encodedClusters = plans.map((plan) => encodeAny(TYPE_URL.cluster, cluster(plan)));
const route = routeConfiguration("svc-1.ns-001.svc.cluster.local");
const cache = new XdsCache({ enabled: true, maxEntries: 20_000, stats: false });
plans.forEach((plan, i) => {
  const key = cacheKey(TYPE_URL.cluster, [stableJson(plan)], []);
  cache.add(key, TYPE_URL.cluster, new VersionedResource(plan.name, encodedClusters[i]));
});
const cdsFrame = frameDiscoveryResponse({
  version_info: "2026-01-01T00:00:00.000Z/1",
  resources: encodedClusters,
  type_url: TYPE_URL.cluster,
  nonce: "n1",
});

Deno.bench("encodeAny: one realistic cluster (cache miss)", { group: "resource" }, () => {
  encodeAny(TYPE_URL.cluster, cluster(plans[7]));
});

Deno.bench("encodeAny: one route configuration (cache miss)", { group: "resource" }, () => {
  encodeAny(TYPE_URL.route, route);
});

Deno.bench("cache hit: key (stableJson of the plan) + lookup", { group: "resource", baseline: true }, () => {
  const key = cacheKey(TYPE_URL.cluster, [stableJson(plans[7])], []);
  if (cache.get(key.id) === undefined) throw new Error("Expected a cache hit");
});

Deno.bench("resourceVersion: SHA-256 of one cluster (delta)", { group: "resource" }, () => {
  resourceVersion(encodedClusters[7]);
});

Deno.bench(
  `frame a CDS response of 3000 cached clusters (${cdsFrame.length} bytes)`,
  { group: "response" },
  () => {
    frameDiscoveryResponse({
      version_info: "2026-01-01T00:00:00.000Z/1",
      resources: encodedClusters,
      type_url: TYPE_URL.cluster,
      nonce: "n1",
    });
  },
);

Deno.bench("load client: read the head of that response", { group: "response" }, () => {
  readResponseHead(cdsFrame, false);
});

Deno.bench("load client: read the 3000 cluster names", { group: "response" }, () => {
  readResourceNames(cdsFrame, false);
});
