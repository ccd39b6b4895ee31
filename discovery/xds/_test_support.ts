/**
 * Test helper: a small push snapshot, generators for it that use the cache contract, a recording logger, and
 * a discovery server on 127.0.0.1:0.
 *
 * @module
 */
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { AdsServer } from "./ads_server.ts";
import { configKey, pushRequest } from "../push/push_request.ts";
import { cacheKey, GeneratorRegistry, type PushSnapshot, type XdsGenerator } from "../generate/generator.ts";
import { type RunningXdsServer, startXdsServer } from "./xds_grpc_server.ts";
import { DEFAULT_XDS_SETTINGS, type XdsSettings } from "./xds_settings.ts";
import type { PushHistory } from "../push/push_history.ts";
import type { Timers } from "@mesh/shared/time/timers";
import { TestAdsClient, testNode } from "./_test_ads_client.ts";

/** The snapshot the test generators read. */
export interface TestPush extends PushSnapshot {
  /** Cluster name → size of filler text in the cluster (to make big responses); negative builds an invalid cluster. */
  readonly clusters: Readonly<Record<string, number>>;
  /** Cluster name → endpoint IPs. */
  readonly endpoints: Readonly<Record<string, readonly string[]>>;
  readonly listeners: readonly string[];
  /** Route configuration name → virtual host domain. */
  readonly routes: Readonly<Record<string, string>>;
}

/** A snapshot with defaults for what is not given. */
export function testPush(version: string, parts: Partial<Omit<TestPush, "version">> = {}): TestPush {
  return {
    version,
    clusters: parts.clusters ?? { a: 0, b: 0 },
    endpoints: parts.endpoints ?? { a: ["10.0.0.1"], b: ["10.0.0.2"] },
    listeners: parts.listeners ?? ["l1"],
    routes: parts.routes ?? { r1: "r1.example.com", r2: "r2.example.com" },
  };
}

/** The dependency key of a cluster's endpoints in the test generators. */
export function endpointsKey(cluster: string): string {
  return configKey("Endpoints", "test", cluster);
}

/** How many times each type's `build()` ran, i.e. how many resources were encoded. */
export type BuildCounts = Record<"cds" | "eds" | "lds" | "rds", number>;

/** Test generators for CDS, EDS, LDS and RDS. EDS keys omit the endpoints, so only invalidation refreshes them. */
export function testGenerators(
  counts: BuildCounts = { cds: 0, eds: 0, lds: 0, rds: 0 },
): GeneratorRegistry<TestPush> {
  const cds: XdsGenerator<TestPush> = {
    // The output depends on the snapshot and the request only, so every proxy has the same shape.
    shapeOf: () => "",
    typeUrl: TYPE_URL.cluster,
    generate: (_proxy, push, request) =>
      Object.entries(push.clusters)
        .filter(([name]) => request.names.length === 0 || request.names.includes(name))
        .map(([name, padding]) => ({
          name,
          key: cacheKey(TYPE_URL.cluster, [name, padding], [configKey("Cluster", "test", name)]),
          build: () => {
            counts.cds++;
            if (padding < 0) return { name, connect_timeout: "not a duration" };
            return {
              name,
              type: "EDS",
              connect_timeout: { seconds: 1 },
              eds_cluster_config: { eds_config: { ads: {}, resource_api_version: "V3" } },
              ...(padding > 0 ? { alt_stat_name: "p".repeat(padding) } : {}),
            };
          },
        })),
  };
  const eds: XdsGenerator<TestPush> = {
    // The output depends on the snapshot and the request only, so every proxy has the same shape.
    shapeOf: () => "",
    typeUrl: TYPE_URL.endpoint,
    generate: (_proxy, push, request) =>
      request.names
        .filter((name) => push.endpoints[name] !== undefined)
        .filter((name) => request.full || request.configsUpdated?.has(endpointsKey(name)) !== false)
        .map((name) => ({
          name,
          key: cacheKey(TYPE_URL.endpoint, [name], [endpointsKey(name)]),
          build: () => {
            counts.eds++;
            return {
              cluster_name: name,
              endpoints: [{
                lb_endpoints: push.endpoints[name].map((ip) => ({
                  endpoint: { address: { socket_address: { address: ip, port_value: 8080 } } },
                })),
              }],
            };
          },
        })),
  };
  const lds: XdsGenerator<TestPush> = {
    // The output depends on the snapshot and the request only, so every proxy has the same shape.
    shapeOf: () => "",
    typeUrl: TYPE_URL.listener,
    generate: (_proxy, push) =>
      push.listeners.map((name) => ({
        name,
        key: cacheKey(TYPE_URL.listener, [name], [configKey("Listener", "test", name)]),
        build: () => {
          counts.lds++;
          return { name, address: { socket_address: { address: "0.0.0.0", port_value: 15001 } } };
        },
      })),
  };
  const rds: XdsGenerator<TestPush> = {
    // The output depends on the snapshot and the request only, so every proxy has the same shape.
    shapeOf: () => "",
    typeUrl: TYPE_URL.route,
    generate: (_proxy, push, request) =>
      request.names
        .filter((name) => push.routes[name] !== undefined)
        .map((name) => ({
          name,
          key: cacheKey(TYPE_URL.route, [name, push.routes[name]], [configKey("Route", "test", name)]),
          build: () => {
            counts.rds++;
            return { name, virtual_hosts: [{ name: "vh", domains: [push.routes[name]] }] };
          },
        })),
  };
  return new GeneratorRegistry<TestPush>().register(cds).register(eds).register(lds).register(rds);
}

/** A discovery server on 127.0.0.1:0 with test generators. */
export interface TestServer {
  readonly service: AdsServer<TestPush>;
  readonly server: RunningXdsServer;
  readonly port: number;
  readonly metrics: Metrics;
  readonly logger: RecordingLogger;
  readonly counts: BuildCounts;
  /**
   * Installs a new snapshot as a full push (or endpoint-only when `full` is false); `forced` makes it the
   * operator's push that resends every type.
   */
  push(
    push: TestPush,
    changes?: { full?: boolean; configsUpdated?: readonly string[]; forced?: boolean },
  ): void;
  close(): Promise<void>;
}

/** Starts a discovery server for tests. */
export async function startTestServer(
  options: {
    settings?: Partial<XdsSettings>;
    push?: TestPush | null;
    now?: () => number;
    pushHistory?: PushHistory;
    /** Generators in place of {@link testGenerators} (whose build counts then stay 0). */
    generators?: GeneratorRegistry<TestPush>;
    /** Drive the server's sweeps of unheld memos. */
    timers?: Timers;
    /** Why streams are refused although a snapshot exists (the server option `waiting`). */
    waiting?: () => string | undefined;
  } = {},
): Promise<TestServer> {
  const metrics = new Metrics("discovery", { version: "test", tag: "test" });
  const logger = new RecordingLogger();
  const counts: BuildCounts = { cds: 0, eds: 0, lds: 0, rds: 0 };
  const initial = options.push === null ? undefined : options.push ?? testPush("v1");
  const service = new AdsServer<TestPush>({
    generators: options.generators ?? testGenerators(counts),
    settings: { ...DEFAULT_XDS_SETTINGS, ...options.settings },
    logger,
    metrics,
    ...(initial === undefined ? {} : { initialPush: initial }),
    ...(options.now === undefined ? {} : { now: options.now }),
    ...(options.pushHistory === undefined ? {} : { pushHistory: options.pushHistory }),
    ...(options.timers === undefined ? {} : { timers: options.timers }),
    ...(options.waiting === undefined ? {} : { waiting: options.waiting }),
  });
  const server = await startXdsServer({
    addr: { hostname: "127.0.0.1", port: 0 },
    service,
    keepalive: { intervalMs: 30_000, timeoutMs: 10_000, maxConnectionAgeNs: 9_223_372_036_854_775_807n },
    logger,
  });
  return {
    service,
    server,
    port: server.port,
    metrics,
    logger,
    counts,
    push(push, changes = {}) {
      const full = changes.full ?? true;
      const reason = changes.forced ? "debug" : full ? "config" : "endpoint";
      service.push(pushRequest(full, reason, changes.configsUpdated, performance.now()), push);
    },
    close: () => server.close(),
  };
}

/** The value of a metric series (0 when the series does not exist). */
export async function metricValue(
  metrics: Metrics,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const metric = metrics.registry.getSingleMetric(name);
  if (metric === undefined) throw new TypeError(`Metric "${name}" is not registered`);
  const { values } = await metric.get();
  const match = values.find((v) =>
    !String((v as { metricName?: string }).metricName ?? "").endsWith("_bucket") &&
    Object.entries(labels).every(([k, want]) => v.labels[k] === want) &&
    Object.keys(v.labels).length === Object.keys(labels).length
  );
  return match?.value ?? 0;
}

export { waitFor } from "@mesh/shared/testing/wait_for";

/** A sidecar node id for pod `name` in namespace `test`. */
export function sidecarId(name: string, ip = "10.1.0.1"): string {
  return `sidecar~${ip}~${name}.test~test.svc.cluster.local`;
}

/**
 * A state-of-the-world proxy for pod `pod` that asks for each type of `watched` in turn (the first with its
 * node), with the names given, ACKing each first response.
 */
export async function watchingProxy(
  server: { readonly port: number },
  pod: string,
  watched: Readonly<Record<string, readonly string[]>>,
): Promise<TestAdsClient> {
  const client = TestAdsClient.sotw(server.port);
  let first = true;
  for (const [typeUrl, names] of Object.entries(watched)) {
    client.send({
      ...(first ? { node: testNode(sidecarId(pod)) } : {}),
      type_url: typeUrl,
      resource_names: names,
    });
    first = false;
    client.ack(await client.next(), names);
  }
  return client;
}
