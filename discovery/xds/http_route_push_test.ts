import "reflect-metadata";
import assert from "node:assert/strict";
import type { Resource } from "@mesh/shared/config/resource";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { GeneratorRegistry, type XdsGenerator } from "../generate/generator.ts";
import { envoyGenerators } from "../generate/envoy/envoy_generators.ts";
import { envoyResources } from "../generate/envoy/_test_envoy.ts";
import { networking, World } from "../generate/_test_world.ts";
import type { PushContext } from "../push/push_context.ts";
import { configKey, pushRequest } from "../push/push_request.ts";
import { SnapshotStage } from "../push/snapshot_stage.ts";
import { AdsServer } from "./ads_server.ts";
import { startXdsServer } from "./xds_grpc_server.ts";
import { DEFAULT_XDS_SETTINGS } from "./xds_settings.ts";
import { plainResource, TestAdsClient, testNode, type TestResponse } from "./_test_ads_client.ts";

const CDS = TYPE_URL.cluster, EDS = TYPE_URL.endpoint, LDS = TYPE_URL.listener, RDS = TYPE_URL.route;
const KEEPALIVE = { intervalMs: 30_000, timeoutMs: 10_000, maxConnectionAgeNs: 9_223_372_036_854_775_807n };
const RATINGS = "ratings.example.svc.cluster.local";
const SIDECAR = "sidecar~10.9.9.9~client.example~example.svc.cluster.local";
const GATEWAY = "router~10.8.0.1~ingress-1.example~example.svc.cluster.local";

/** The mesh VirtualService of ratings: HTTP routes alone, split `v1` to the `plain` subset. */
function ratingsSplit(plain: number): Resource {
  return networking("VirtualService", "example", "ratings", {
    hosts: ["ratings"],
    http: [{
      route: [
        { destination: { host: "ratings", subset: "plain" }, weight: plain },
        { destination: { host: "ratings" }, weight: 100 - plain },
      ],
    }],
  });
}

/** The mesh VirtualService of the TCP database: a weighted TCP route. */
function dbSplit(first: number): Resource {
  return networking("VirtualService", "example", "db", {
    hosts: ["db.example.com"],
    tcp: [{
      route: [
        { destination: { host: "db.example.com", port: { number: 5432 } }, weight: first },
        { destination: { host: "ratings", port: { number: 8080 } }, weight: 100 - first },
      ],
    }],
  });
}

/** A gateway TLS passthrough server and the VirtualService its listener routes by SNI with. */
function edge(plain: number): Resource[] {
  return [
    networking("Gateway", "example", "edge", {
      selector: { app: "ingress" },
      servers: [{
        port: { number: 443, name: "tls", protocol: "TLS" },
        hosts: ["*.example.com"],
        tls: { mode: "PASSTHROUGH" },
      }],
    }),
    networking("VirtualService", "example", "edge", {
      hosts: ["*"],
      gateways: ["edge"],
      tls: [{
        match: [{ port: 443, sniHosts: ["a.example.com"] }],
        route: [
          { destination: { host: "ratings", subset: "plain", port: { number: 8080 } }, weight: plain },
          { destination: { host: "ratings", port: { number: 8080 } }, weight: 100 - plain },
        ],
      }],
    }),
  ];
}

/** The Envoy generators, counting `generate` calls by type URL and proxy type. */
function countingGenerators(): { registry: GeneratorRegistry<PushContext>; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const registry = new GeneratorRegistry<PushContext>();
  for (const inner of envoyGenerators()) {
    const spy: XdsGenerator<PushContext> = {
      ...inner,
      generate: (proxy, push, request) => {
        const key = `${proxy.type} ${inner.typeUrl}`;
        calls.set(key, (calls.get(key) ?? 0) + 1);
        return inner.generate(proxy, push, request);
      },
    };
    registry.register(spy);
  }
  return { registry, calls };
}

/** Watches each of `watches` in turn, ACKing each first response. */
async function watching(port: number, id: string, watches: [string, string[]][]): Promise<TestAdsClient> {
  const client = TestAdsClient.sotw(port);
  const metadata: Record<string, string | Record<string, string>> = id === GATEWAY
    ? { NAMESPACE: "example", LABELS: { app: "ingress" } }
    : { NAMESPACE: "example", LABELS: { app: "client" }, INSTANCE_IPS: "10.9.9.9" };
  for (const [i, [typeUrl, names]] of watches.entries()) {
    client.send({
      ...(i === 0 ? { node: testNode(id, metadata) } : {}),
      type_url: typeUrl,
      resource_names: names,
    });
    client.ack(await client.next(), names);
  }
  return client;
}

/** The next `count` responses, each ACKed; then a probe proves nothing else was sent. */
async function nextResponses(client: TestAdsClient, count: number): Promise<TestResponse[]> {
  const responses: TestResponse[] = [];
  for (let i = 0; i < count; i++) {
    const response = await client.next();
    client.ack(response, response.typeUrl === RDS ? ["8080"] : []);
    responses.push(response);
  }
  // A new watch of a type not pushed is answered at once: were anything else sent, it would come first.
  const probe = `outbound|8080||${RATINGS}`;
  client.send({ type_url: EDS, version_info: "", response_nonce: "", resource_names: [probe] });
  const answer = await client.next();
  assert.equal(answer.typeUrl, EDS, "nothing else was sent before the probe's answer");
  client.send({
    type_url: EDS,
    version_info: answer.version,
    response_nonce: answer.nonce,
    resource_names: [],
  });
  return responses;
}

/** The weights of a listener's TCP proxies, as `cluster=weight`. */
function tcpWeights(response: TestResponse, listener: string): string[] {
  const found = response.resources.find((r) => r.name === listener);
  assert.ok(found, `listener ${listener} is sent`);
  const json = JSON.stringify(plainResource(found));
  return [...json.matchAll(/"name":"(outbound\|[^"]+)","weight":(?:\{"value":)?(\d+)/g)].map((m) =>
    `${m[1]}=${m[2]}`
  );
}

Deno.test("A push of VirtualService changes builds a sidecar's listeners only when more than HTTP routes changed", async (t) => {
  const world = new World().apply(...envoyResources(), ratingsSplit(90), dbSplit(70), ...edge(80));
  const stage = new SnapshotStage({
    build: () => world.push(),
    log: new RecordingLogger(),
    turn: () => Promise.resolve(),
  });
  const { registry, calls } = countingGenerators();
  const logger = new RecordingLogger();
  const service = new AdsServer<PushContext>({
    generators: registry,
    settings: DEFAULT_XDS_SETTINGS,
    logger,
    initialPush: stage.current(),
  });
  stage.onPush((request, push) => service.push(request, push));
  const server = await startXdsServer({
    addr: { hostname: "127.0.0.1", port: 0 },
    service,
    keepalive: KEEPALIVE,
    logger,
  });
  const sidecar = await watching(server.port, SIDECAR, [[CDS, []], [LDS, []], [RDS, ["8080"]]]);
  const gateway = await watching(server.port, GATEWAY, [[LDS, []]]);
  const changed = (name: string) =>
    pushRequest(true, "config", [configKey("VirtualService", "example", name)], 0);
  try {
    await t.step("an HTTP route edit sends the sidecar RDS alone, its listeners not even built", async () => {
      const before = new Map(calls);
      world.apply(ratingsSplit(50));
      await stage.handle(changed("ratings"));
      const [routes] = await nextResponses(sidecar, 1);
      assert.equal(routes.typeUrl, RDS);
      assert.match(JSON.stringify(plainResource(routes.resources[0])), /"weight":\{"value":50\}/);
      assert.equal(calls.get(`sidecar ${LDS}`), before.get(`sidecar ${LDS}`), "no sidecar LDS build");
      assert.equal(calls.get(`sidecar ${CDS}`), before.get(`sidecar ${CDS}`), "nor CDS");
      assert.ok(
        calls.get(`router ${LDS}`)! > before.get(`router ${LDS}`)!,
        "a gateway's listeners are built",
      );
    });

    await t.step("a TCP route edit sends the sidecar its new listeners (and RDS after them)", async () => {
      world.apply(dbSplit(40));
      await stage.handle(changed("db"));
      const [listeners, routes] = await nextResponses(sidecar, 2);
      assert.equal(listeners.typeUrl, LDS);
      assert.deepEqual(tcpWeights(listeners, "0.0.0.0_5432"), [
        "outbound|5432||db.example.com=40",
        `outbound|8080||${RATINGS}=60`,
      ]);
      assert.equal(routes.typeUrl, RDS);
    });

    await t.step(
      "a TCP edit a snapshot took in before its event came reaches the sidecar with the event",
      async () => {
        world.apply(dbSplit(25));
        // Built for another change, the snapshot reads the store as it is: the edit is in it already.
        await stage.handle(pushRequest(true, "config", [configKey("DestinationRule", "example", "none")], 0));
        await stage.handle(changed("db"));
        const [listeners] = await nextResponses(sidecar, 2);
        assert.equal(listeners.typeUrl, LDS);
        assert.deepEqual(tcpWeights(listeners, "0.0.0.0_5432"), [
          "outbound|5432||db.example.com=25",
          `outbound|8080||${RATINGS}=75`,
        ]);
      },
    );

    await t.step(
      "a TLS route edit of a VirtualService bound to a gateway sends that gateway's listeners",
      async () => {
        world.apply(...edge(30));
        await stage.handle(changed("edge"));
        const [listeners] = await nextResponses(gateway, 1);
        assert.equal(listeners.typeUrl, LDS);
        assert.deepEqual(tcpWeights(listeners, "0.0.0.0_443"), [
          `outbound|8080|plain|${RATINGS}=30`,
          `outbound|8080||${RATINGS}=70`,
        ]);
      },
    );

    await t.step("an HTTP route edit merged with a TCP one builds listeners", async () => {
      const before = new Map(calls);
      world.apply(ratingsSplit(20), dbSplit(10));
      await stage.handle(
        pushRequest(true, "config", [
          configKey("VirtualService", "example", "ratings"),
          "VirtualService/example/db",
        ], 0),
      );
      const [listeners] = await nextResponses(sidecar, 2);
      assert.equal(listeners.typeUrl, LDS);
      assert.ok(calls.get(`sidecar ${LDS}`)! > before.get(`sidecar ${LDS}`)!);
    });
  } finally {
    sidecar.close();
    gateway.close();
    await server.close();
    service.close();
  }
});
