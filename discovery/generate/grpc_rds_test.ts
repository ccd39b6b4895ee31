import assert from "node:assert/strict";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { grpcRdsGenerator } from "./grpc_rds.ts";
import { DEFAULT_RETRY_POLICY, GRPC_CHANNEL_ID_KEY } from "./route_action.ts";
import { GREETER, greeterResources, greeterSplit, grpcProxy, networking, run, World } from "./_test_world.ts";

type Obj = Record<string, unknown>;
const NAME = `${GREETER}:7070`;
const V1 = `outbound|7070|v1|${GREETER}`;
const V2 = `outbound|7070|v2|${GREETER}`;

function routesOf(config: Obj): Obj[] {
  const hosts = config.virtual_hosts as { routes: Obj[] }[];
  assert.equal(hosts.length, 1);
  return hosts[0].routes;
}

function routeConfig(world: World, proxy = grpcProxy(), name = NAME): Obj {
  const out = run(grpcRdsGenerator, proxy, world.push(), { names: [name] });
  assert.deepEqual(out.names, [name]);
  return out.byName.get(name)!;
}

function vs(http: unknown[]) {
  return networking("VirtualService", "example", "greeter", { hosts: ["greeter"], http });
}

Deno.test("gRPC RDS routes a service without a VirtualService to its own cluster", () => {
  const config = routeConfig(new World().apply(...greeterResources()));
  assert.equal(config.name, NAME);
  const host = (config.virtual_hosts as Obj[])[0];
  assert.equal(host.name, NAME);
  assert.deepEqual(host.domains, [NAME, GREETER]);
  assert.deepEqual(routesOf(config), [{
    match: { prefix: "/" },
    route: {
      cluster: `outbound|7070||${GREETER}`,
      timeout: {},
      retry_policy: { ...DEFAULT_RETRY_POLICY },
    },
  }]);
});

Deno.test("gRPC RDS splits traffic by VirtualService weights across subset clusters", async (t) => {
  const world = new World().apply(...greeterResources(), greeterSplit(80, 20));

  await t.step("two weighted destinations become weighted_clusters with their total", () => {
    const [route] = routesOf(routeConfig(world));
    assert.deepEqual((route.route as Obj).weighted_clusters, {
      clusters: [{ name: V1, weight: { value: 80 } }, { name: V2, weight: { value: 20 } }],
      total_weight: { value: 100 },
    });
  });

  await t.step("a zero weight drops its destination; one left takes all traffic", () => {
    world.apply(greeterSplit(0, 100));
    const [route] = routesOf(routeConfig(world));
    assert.equal((route.route as Obj).cluster, V2);
    assert.equal((route.route as Obj).weighted_clusters, undefined);
  });

  await t.step("a short name dialled by the client is a domain of its route configuration", () => {
    const config = routeConfig(world, grpcProxy(), "greeter:7070");
    assert.deepEqual((config.virtual_hosts as Obj[])[0].domains, [NAME, GREETER, "greeter:7070", "greeter"]);
  });
});

Deno.test("gRPC RDS turns HTTP matches into path and header matchers", async (t) => {
  const world = new World().apply(
    ...greeterResources(),
    vs([
      {
        name: "pinned",
        match: [
          {
            name: "exact",
            uri: { exact: "/helloworld.Greeter/SayHello" },
            headers: { "x-user": { exact: "tester" } },
          },
          {
            uri: { regex: "/helloworld\\.Greeter/.*" },
            ignoreUriCase: true,
            headers: { "x-prefix": { prefix: "ab" } },
          },
          {
            uri: { prefix: "/helloworld." },
            headers: { "x-re": { regex: "a+b" }, "x-any": {} },
            withoutHeaders: { "x-no": {} },
          },
          { method: { exact: "POST" }, authority: { prefix: "greeter" }, queryParams: { q: { exact: "1" } } },
        ],
        route: [{ destination: { host: "greeter", subset: "v2" } }],
      },
      { route: [{ destination: { host: "greeter", subset: "v1" } }] },
    ]),
  );
  const routes = routesOf(routeConfig(world));

  await t.step("each match condition is one route, in order, named route.match", () => {
    assert.equal(routes.length, 5);
    assert.deepEqual(routes.map((r) => r.name), ["pinned.exact", "pinned", "pinned", "pinned", undefined]);
    assert.deepEqual(routes.map((r) => (r.route as Obj).cluster), [V2, V2, V2, V2, V1]);
  });

  await t.step("paths: exact, RE2 regex (case-insensitive), prefix, and every path without uri", () => {
    assert.equal(routes[0].match && (routes[0].match as Obj).path, "/helloworld.Greeter/SayHello");
    assert.deepEqual((routes[1].match as Obj).safe_regex, {
      google_re2: {},
      regex: "/helloworld\\.Greeter/.*",
    });
    assert.deepEqual((routes[1].match as Obj).case_sensitive, { value: false });
    assert.equal((routes[2].match as Obj).prefix, "/helloworld.");
    assert.equal((routes[3].match as Obj).prefix, "/");
    assert.deepEqual(routes[4].match, { prefix: "/" });
  });

  await t.step(
    "headers: exact, prefix, regex, present, inverted; method and authority as pseudo-headers",
    () => {
      assert.deepEqual((routes[0].match as Obj).headers, [{ name: "x-user", exact_match: "tester" }]);
      assert.deepEqual((routes[1].match as Obj).headers, [{ name: "x-prefix", prefix_match: "ab" }]);
      assert.deepEqual((routes[2].match as Obj).headers, [
        { name: "x-re", safe_regex_match: { google_re2: {}, regex: "a+b" } },
        { name: "x-any", present_match: true },
        { name: "x-no", present_match: true, invert_match: true },
      ]);
      assert.deepEqual((routes[3].match as Obj).headers, [
        { name: ":method", exact_match: "POST" },
        { name: ":authority", prefix_match: "greeter" },
      ]);
      assert.deepEqual((routes[3].match as Obj).query_parameters, [{
        name: "q",
        string_match: { exact: "1" },
      }]);
    },
  );
});

Deno.test("gRPC RDS keeps only the match conditions that apply to the client and port", async (t) => {
  const world = new World().apply(
    ...greeterResources(),
    vs([
      {
        match: [{ sourceLabels: { role: "tester" } }],
        route: [{ destination: { host: "greeter", subset: "v2" } }],
      },
      { match: [{ sourceNamespace: "canary" }], route: [{ destination: { host: "greeter", subset: "v2" } }] },
      { match: [{ port: 8080 }], route: [{ destination: { host: "greeter", subset: "v2" } }] },
      {
        match: [{ gateways: ["example/ingress"] }],
        route: [{ destination: { host: "greeter", subset: "v2" } }],
      },
      { route: [{ destination: { host: "greeter", subset: "v1" } }] },
    ]),
  );
  const push = world.push();
  const clusters = (proxy: ReturnType<typeof grpcProxy>) => {
    const out = run(grpcRdsGenerator, proxy, push, { names: [NAME] });
    return {
      routes: routesOf(out.byName.get(NAME)!).map((r) => (r.route as Obj).cluster),
      key: out.cacheable.get(NAME)!.key,
    };
  };

  await t.step("a client without the source labels or namespace gets the catch-all only", () => {
    assert.deepEqual(clusters(grpcProxy("example")).routes, [V1]);
  });

  await t.step("a client with the labels gets the labelled route first", () => {
    assert.deepEqual(clusters(grpcProxy("example", { role: "tester" })).routes, [V2, V1]);
  });

  await t.step("a client in the named namespace gets that route", () => {
    assert.deepEqual(clusters(grpcProxy("canary")).routes, [V2, V1]);
  });

  await t.step("clients that see different routes never share a cache key", () => {
    const keys = new Set([
      clusters(grpcProxy("example")).key.id,
      clusters(grpcProxy("example", { role: "tester" })).key.id,
      clusters(grpcProxy("canary")).key.id,
    ]);
    assert.equal(keys.size, 3);
    assert.equal(
      clusters(grpcProxy("example", { other: "x" })).key.id,
      clusters(grpcProxy("example")).key.id,
    );
  });
});

Deno.test("gRPC RDS carries timeouts, retries, hashing, faults and rewrites", async (t) => {
  const world = new World().apply(
    ...greeterResources(),
    vs([
      {
        route: [{ destination: { host: "greeter", subset: "v1" } }],
        timeout: "1.5s",
        retries: { attempts: 3, retryOn: "unavailable,503", perTryTimeout: "500ms" },
        fault: {
          abort: { httpStatus: 503, percentage: { value: 12.5 } },
          delay: { fixedDelay: "2s", percent: 5 },
        },
        rewrite: { uri: "/v2/", authority: "greeter-v2" },
      },
      {
        match: [{ uri: { prefix: "/none" } }],
        route: [{ destination: { host: "greeter" } }],
        retries: { attempts: 0 },
      },
    ]),
    networking("DestinationRule", "example", "greeter", {
      host: "greeter",
      trafficPolicy: { loadBalancer: { consistentHash: { httpHeaderName: "x-user" } } },
      subsets: [
        {
          name: "v1",
          labels: { version: "v1" },
          trafficPolicy: { loadBalancer: { consistentHash: { useSourceIp: true } } },
        },
        { name: "v2", labels: { version: "v2" } },
      ],
    }),
  );
  const [first, second] = routesOf(routeConfig(world));
  const action = first.route as Obj;

  await t.step("a timeout caps the gRPC stream duration and the route timeout", () => {
    assert.deepEqual(action.timeout, { seconds: "1", nanos: 500_000_000 });
    assert.deepEqual(action.max_stream_duration, {
      max_stream_duration: { seconds: "1", nanos: 500_000_000 },
      grpc_timeout_header_max: { seconds: "1", nanos: 500_000_000 },
    });
  });

  await t.step("retries: attempts, conditions and status codes split, per-try timeout", () => {
    assert.deepEqual(action.retry_policy, {
      retry_on: "unavailable,retriable-status-codes",
      num_retries: { value: 3 },
      retriable_status_codes: [503],
      host_selection_retry_max_attempts: "5",
      per_try_timeout: { nanos: 500_000_000 },
    });
    assert.equal((second.route as Obj).retry_policy, undefined);
  });

  await t.step("the subset's consistent hash on source IP hashes on the gRPC channel", () => {
    assert.deepEqual(action.hash_policy, [{ filter_state: { key: GRPC_CHANNEL_ID_KEY } }]);
    assert.deepEqual((second.route as Obj).hash_policy, [{ header: { header_name: "x-user" } }]);
  });

  await t.step("faults become the fault filter's per-route config", () => {
    assert.deepEqual(first.typed_per_filter_config, {
      "envoy.filters.http.fault": {
        "@type": TYPE_URL.fault,
        delay: { fixed_delay: { seconds: "2" }, percentage: { numerator: 5, denominator: "HUNDRED" } },
        abort: { http_status: 503, percentage: { numerator: 125000, denominator: "MILLION" } },
      },
    });
  });

  await t.step("rewrites are kept", () => {
    assert.equal(action.prefix_rewrite, "/v2/");
    assert.equal(action.host_rewrite_literal, "greeter-v2");
  });
});

Deno.test("gRPC RDS skips routes gRPC cannot follow and falls back to the default route", async (t) => {
  await t.step("a redirect route is left out", () => {
    const world = new World().apply(
      ...greeterResources(),
      vs([
        { match: [{ uri: { prefix: "/old" } }], redirect: { uri: "/new" } },
        { route: [{ destination: { host: "greeter", subset: "v1" } }] },
      ]),
    );
    assert.deepEqual(routesOf(routeConfig(world)).map((r) => (r.route as Obj).cluster), [V1]);
  });

  await t.step("a VirtualService none of whose routes apply leaves the service's default route", () => {
    const world = new World().apply(
      ...greeterResources(),
      vs([{ match: [{ port: 9999 }], route: [{ destination: { host: "greeter", subset: "v1" } }] }]),
    );
    assert.deepEqual(routesOf(routeConfig(world)).map((r) => (r.route as Obj).cluster), [
      `outbound|7070||${GREETER}`,
    ]);
  });

  await t.step("a destination port picks the cluster port; another service's only port is used", () => {
    const world = new World().apply(
      ...greeterResources(),
      networking("ServiceEntry", "example", "other", {
        hosts: ["other.example.svc.cluster.local"],
        location: "MESH_INTERNAL",
        resolution: "STATIC",
        ports: [{ number: 9000, name: "grpc", protocol: "GRPC" }],
        endpoints: [{ address: "10.0.3.1" }],
      }),
      vs([
        {
          match: [{ uri: { prefix: "/a" } }],
          route: [{ destination: { host: "greeter", port: { number: 8000 } } }],
        },
        { route: [{ destination: { host: "other" } }] },
      ]),
    );
    assert.deepEqual(routesOf(routeConfig(world)).map((r) => (r.route as Obj).cluster), [
      `outbound|8000||${GREETER}`,
      "outbound|9000||other.example.svc.cluster.local",
    ]);
  });
});

Deno.test("gRPC RDS cache keys follow exactly the inputs of the route", async (t) => {
  const world = new World().apply(...greeterResources(), greeterSplit(80, 20));
  const keyOf = (proxy = grpcProxy()) =>
    run(grpcRdsGenerator, proxy, world.push(), { names: [NAME] }).cacheable.get(NAME)!.key;
  const first = keyOf();

  await t.step("it depends on the service, the VirtualService and nothing it did not read", () => {
    assert.deepEqual([...first.dependsOn].sort(), [
      "ServiceEntry/example/greeter.example.svc.cluster.local",
      "VirtualService/example/greeter",
    ]);
  });

  await t.step("a new snapshot with the same inputs has the same key", () => {
    assert.equal(keyOf().id, first.id);
    assert.equal(keyOf(grpcProxy("other")).id, first.id);
  });

  await t.step("a VirtualService change gives a new key", () => {
    world.apply(greeterSplit(0, 100));
    assert.notEqual(keyOf().id, first.id);
  });

  await t.step("a consistent hash added by a DestinationRule gives a new key", () => {
    const before = keyOf();
    world.apply(networking("DestinationRule", "example", "greeter", {
      host: "greeter",
      subsets: [{ name: "v1", labels: { version: "v1" } }, {
        name: "v2",
        labels: { version: "v2" },
        trafficPolicy: { loadBalancer: { consistentHash: { httpHeaderName: "u" } } },
      }],
    }));
    const after = keyOf();
    assert.notEqual(after.id, before.id);
    assert.ok(after.dependsOn.includes("DestinationRule/example/greeter"));
  });
});

Deno.test("gRPC RDS hashes as the DestinationRule the service's namespace exports, seen from any namespace", () => {
  const world = new World().apply(
    ...greeterResources(),
    networking("DestinationRule", "example", "greeter", {
      host: "greeter",
      trafficPolicy: { loadBalancer: { consistentHash: { httpHeaderName: "x-user" } } },
    }),
  );
  for (const namespace of ["example", "elsewhere"]) {
    const [route] = routesOf(routeConfig(world, grpcProxy(namespace)));
    assert.deepEqual((route.route as Obj).hash_policy, [{ header: { header_name: "x-user" } }], namespace);
  }
});
