import assert from "node:assert/strict";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { formatPgvViolations, validatePgvAny } from "@mesh/proto/pgv_validate";
import { networking, run, World } from "../_test_world.ts";
import { envoyResources, envoySidecar } from "./_test_envoy.ts";
import { envoyCdsGenerator } from "./envoy_cds.ts";
import { envoyLdsGenerator } from "./envoy_lds.ts";
import { envoyRdsGenerator, planRouteConfig, routeConfigKeyId, virtualHostDomains } from "./envoy_rds.ts";
import { cacheKey } from "../generator.ts";
import { TYPE_URL } from "@mesh/proto/type_urls";
import type { Proxy } from "../../model/proxy.ts";
import { planRouteConfiguration } from "../route_plan.ts";
import { ListenerConflicts } from "../../push/listener_conflicts.ts";

type Obj = Record<string, unknown>;
const RATINGS = "ratings.example.svc.cluster.local";

function world(): World {
  return new World().apply(
    ...envoyResources(),
    networking("ServiceEntry", "other", "ratings-other", {
      hosts: ["reviews.other.svc.cluster.local"],
      location: "MESH_INTERNAL",
      resolution: "STATIC",
      addresses: ["10.96.0.9"],
      ports: [{ number: 8080, name: "http", protocol: "HTTP" }, {
        number: 6379,
        name: "redis",
        protocol: "TCP",
      }],
      endpoints: [{ address: "10.0.3.1" }],
    }),
    networking("VirtualService", "example", "ratings", {
      hosts: ["ratings"],
      http: [{
        match: [{ uri: { prefix: "/v2" } }],
        route: [{ destination: { host: "ratings", subset: "plain" }, weight: 100 }],
        timeout: "3s",
      }, { route: [{ destination: { host: "ratings" } }] }],
    }),
  );
}

Deno.test("A virtual host answers to every name a client of the proxy's namespace may use", () => {
  const push = world().push();
  const service = push.services().find((s) => s.hostname === RATINGS)!;
  assert.deepEqual(virtualHostDomains(service, 8080, "example"), [
    RATINGS,
    `${RATINGS}:8080`,
    "ratings",
    "ratings:8080",
    "ratings.example",
    "ratings.example:8080",
    "ratings.example.svc",
    "ratings.example.svc:8080",
  ]);
  assert.ok(
    !virtualHostDomains(service, 8080, "other").includes("ratings"),
    "no short name across namespaces",
  );
});

Deno.test("Envoy RDS routes each outbound HTTP port through the VirtualService, unknown hosts to the catch-all", () => {
  const { byName, names } = run(envoyRdsGenerator, envoySidecar(), world().push());
  assert.ok(names.includes("8080"), names.join());
  const hosts = byName.get("8080")!.virtual_hosts as Obj[];
  const ratings = hosts.find((h) => h.name === `${RATINGS}:8080`)!;
  const routes = ratings.routes as Obj[];
  assert.equal(routes.length, 2);
  assert.equal((routes[0].route as Obj).cluster, `outbound|8080|plain|${RATINGS}`);
  assert.ok(JSON.stringify(routes[0].match).includes("/v2"));
  assert.ok(hosts.some((h) => h.name === "reviews.other.svc.cluster.local:8080"));
  const last = hosts.at(-1)!;
  assert.deepEqual(last.domains, ["*"]);
  assert.equal(((last.routes as Obj[])[0].route as Obj).cluster, "PassthroughCluster");
  const all = hosts.flatMap((h) => h.domains as string[]);
  assert.equal(new Set(all).size, all.length, "no domain twice");
});

Deno.test("With REGISTRY_ONLY unknown hosts go to BlackHoleCluster", () => {
  const w = world().apply(networking("Sidecar", "example", "default", {
    egress: [{ hosts: ["*/*"] }],
    outboundTrafficPolicy: { mode: "REGISTRY_ONLY" },
  }));
  const { byName } = run(envoyRdsGenerator, envoySidecar(), w.push());
  const last = (byName.get("8080")!.virtual_hosts as Obj[]).at(-1)!;
  assert.equal(((last.routes as Obj[])[0].route as Obj).cluster, "BlackHoleCluster");
  const lds = run(envoyLdsGenerator, envoySidecar(), w.push());
  assert.ok(JSON.stringify(lds.byName.get("virtualOutbound")).includes("BlackHoleCluster"));
});

Deno.test("Envoy LDS: the two virtual listeners, HTTP listeners per port on RDS, TCP listeners per address", () => {
  const { byName, names } = run(envoyLdsGenerator, envoySidecar("example", "10.0.2.1"), world().push());
  const outbound = byName.get("virtualOutbound")!;
  assert.deepEqual((outbound.use_original_dst as Obj).value, true);
  const http = JSON.stringify(byName.get("0.0.0.0_8080"));
  assert.ok(http.includes('"route_config_name":"8080"'), http);
  const redis = JSON.stringify(byName.get("10.96.0.9_6379"));
  assert.ok(redis.includes("outbound|6379||reviews.other.svc.cluster.local"), redis);
  assert.ok(names.includes("0.0.0.0_5432"), "a TCP service without an address takes the wildcard listener");
  const inbound = byName.get("virtualInbound")!;
  const chains = (inbound.filter_chains as Obj[]).map((c) => c.name);
  assert.deepEqual(chains, ["inbound|9080|mtls", "inbound|9080|plaintext", "virtualInbound-catchall"]);
  const mtls = JSON.stringify((inbound.filter_chains as Obj[])[0]);
  assert.ok(mtls.includes("ROOTCA") && mtls.includes("require_client_certificate"), mtls);
});

Deno.test("Every Envoy listener and route encodes and passes Envoy's validation rules; names resolve", () => {
  const proxy = envoySidecar("example", "10.0.2.1");
  const push = world().push();
  const lds = run(envoyLdsGenerator, proxy, push);
  const rds = run(envoyRdsGenerator, proxy, push);
  const cds = run(envoyCdsGenerator, proxy, push);
  for (const [name, encoded] of [...lds.bytes, ...rds.bytes]) {
    const violations = validatePgvAny(encoded);
    assert.equal(violations.length, 0, `${name}: ${formatPgvViolations(violations)}`);
  }
  const text = JSON.stringify([...lds.byName.values()]);
  for (const routeName of text.matchAll(/"route_config_name":"([^"]+)"/g)) {
    assert.ok(rds.byName.has(routeName[1]), `LDS names route ${routeName[1]}, which RDS serves`);
  }
  const clusterRefs = JSON.stringify([...lds.byName.values(), ...rds.byName.values()])
    .matchAll(/"cluster":"([^"]+)"/g);
  for (const [, cluster] of clusterRefs) {
    assert.ok(cds.byName.has(cluster), `${cluster} is referenced and CDS serves it`);
  }
});

Deno.test("Envoy routes carry redirects, mirrors, CORS and header changes from the VirtualService", () => {
  const w = world().apply(networking("VirtualService", "example", "ratings", {
    hosts: ["ratings"],
    http: [{
      name: "moved",
      match: [{ uri: { prefix: "/old" } }],
      redirect: { uri: "/new", authority: "ratings.example.svc.cluster.local", redirectCode: 308 },
    }, {
      route: [{ destination: { host: "ratings" } }],
      mirror: { host: "reviews.other.svc.cluster.local", port: { number: 8080 } },
      mirrorPercentage: { value: 12.5 },
      corsPolicy: {
        allowOrigins: [{ exact: "https://shop.example" }, { prefix: "https://dev." }],
        allowMethods: ["GET", "POST"],
        allowHeaders: ["x-token"],
        exposeHeaders: ["x-trace"],
        maxAge: "24h",
        allowCredentials: true,
      },
      headers: {
        request: { set: { "x-mesh": "yes" }, add: { "x-hop": "sidecar" }, remove: ["x-internal"] },
        response: { set: { "cache-control": "no-store" }, remove: ["server"] },
      },
    }],
  }));
  const proxy = envoySidecar("example", "10.0.2.1");
  const push = w.push();
  const rds = run(envoyRdsGenerator, proxy, push);
  const ratings = (rds.byName.get("8080")!.virtual_hosts as Obj[]).find((h) => h.name === `${RATINGS}:8080`)!;
  const [moved, main] = ratings.routes as Obj[];
  assert.equal(moved.name, "moved");
  assert.deepEqual(moved.redirect, {
    path_redirect: "/new",
    host_redirect: "ratings.example.svc.cluster.local",
    response_code: "PERMANENT_REDIRECT",
  });
  assert.equal(moved.route, undefined, "a redirect does not forward");
  const action = main.route as Obj;
  assert.deepEqual(action.request_mirror_policies, [{
    cluster: "outbound|8080||reviews.other.svc.cluster.local",
    runtime_fraction: { default_value: { numerator: 125_000, denominator: "MILLION" } },
  }]);
  assert.deepEqual(action.cors, {
    allow_origin_string_match: [{ exact: "https://shop.example" }, { prefix: "https://dev." }],
    allow_methods: "GET,POST",
    allow_headers: "x-token",
    expose_headers: "x-trace",
    max_age: "86400",
    allow_credentials: { value: true },
  });
  assert.deepEqual(main.request_headers_to_add, [
    { header: { key: "x-mesh", value: "yes" }, append_action: "OVERWRITE_IF_EXISTS_OR_ADD" },
    { header: { key: "x-hop", value: "sidecar" }, append_action: "APPEND_IF_EXISTS_OR_ADD" },
  ]);
  assert.deepEqual(main.request_headers_to_remove, ["x-internal"]);
  assert.deepEqual(main.response_headers_to_add, [
    { header: { key: "cache-control", value: "no-store" }, append_action: "OVERWRITE_IF_EXISTS_OR_ADD" },
  ]);
  assert.deepEqual(main.response_headers_to_remove, ["server"]);
  for (const [name, encoded] of rds.bytes) {
    const violations = validatePgvAny(encoded);
    assert.equal(violations.length, 0, `${name}: ${formatPgvViolations(violations)}`);
  }
  const cds = run(envoyCdsGenerator, proxy, push);
  assert.ok(cds.byName.has("outbound|8080||reviews.other.svc.cluster.local"), "the mirror's cluster exists");
});

Deno.test("Proxyless gRPC clients are not given redirects or mirrors", () => {
  const w = world().apply(networking("VirtualService", "example", "ratings", {
    hosts: ["ratings"],
    http: [
      { match: [{ uri: { prefix: "/old" } }], redirect: { uri: "/new" } },
      { route: [{ destination: { host: "ratings" } }], mirror: { host: "reviews.other.svc.cluster.local" } },
    ],
  }));
  const target = `${RATINGS}:8080`;
  const planned = planRouteConfiguration(
    {
      name: target,
      service: w.push().services().find((s) => s.hostname === RATINGS)!,
      port: { port: 8080, name: "http", protocol: "HTTP" },
    },
    envoySidecar("example", "10.0.2.1"),
    w.push(),
  );
  assert.equal(planned.plan.routes.length, 1, "the redirect route is left out");
  assert.equal(planned.plan.routes[0].mirrorCluster, undefined);
});

Deno.test("A sidecar's TCP listener follows the VirtualService's TCP route and routes TLS by SNI", () => {
  const w = world().apply(networking("VirtualService", "other", "redis", {
    hosts: ["reviews.other.svc.cluster.local"],
    tcp: [
      { match: [{ port: 9999 }], route: [{ destination: { host: "reviews.other.svc.cluster.local" } }] },
      {
        match: [{ port: 6379 }],
        route: [
          { destination: { host: "reviews.other.svc.cluster.local", port: { number: 6379 } }, weight: 90 },
          { destination: { host: RATINGS, port: { number: 8080 } }, weight: 10 },
        ],
      },
    ],
    tls: [{
      match: [{ port: 6379, sniHosts: ["reviews.other.svc.cluster.local"] }],
      route: [{ destination: { host: RATINGS, port: { number: 8080 } } }],
    }],
  }));
  const proxy = envoySidecar("example", "10.0.2.1");
  const lds = run(envoyLdsGenerator, proxy, w.push());
  const listener = lds.byName.get("10.96.0.9_6379")!;
  const chains = listener.filter_chains as Obj[];
  assert.equal(chains.length, 2);
  assert.deepEqual((chains[0].filter_chain_match as Obj).server_names, ["reviews.other.svc.cluster.local"]);
  const proxyOf = (chain: Obj) => ((chain.filters as Obj[])[0].typed_config as Obj);
  assert.equal(proxyOf(chains[0]).cluster, `outbound|8080||${RATINGS}`);
  assert.deepEqual(proxyOf(chains[1]).weighted_clusters, {
    clusters: [
      { name: "outbound|6379||reviews.other.svc.cluster.local", weight: 90 },
      { name: `outbound|8080||${RATINGS}`, weight: 10 },
    ],
  }, "the first TCP route whose match applies to the port");
  assert.match(JSON.stringify(listener.listener_filters), /tls_inspector/);
  for (const [name, encoded] of lds.bytes) {
    const violations = validatePgvAny(encoded);
    assert.equal(violations.length, 0, `${name}: ${formatPgvViolations(violations)}`);
  }
});

Deno.test("DISCOVERY_HTTP10 and DISCOVERY_SIDECAR_USE_REMOTE_ADDRESS reach the outbound HTTP connection managers", () => {
  const hcmOf = (http10: boolean, useRemoteAddress: boolean) => {
    const lds = run(
      envoyLdsGenerator,
      envoySidecar("example", "10.0.2.1"),
      world().push({ outboundHttp: { http10, useRemoteAddress } }),
    );
    const chain = (lds.byName.get("0.0.0.0_8080")!.filter_chains as Obj[])[0];
    return (chain.filters as Obj[])[0].typed_config as Obj;
  };
  const off = hcmOf(false, false);
  assert.equal(off.http_protocol_options, undefined);
  assert.deepEqual(off.use_remote_address, { value: false });
  const on = hcmOf(true, true);
  assert.deepEqual(on.http_protocol_options, { accept_http_10: true });
  assert.deepEqual(on.use_remote_address, { value: true });
});

Deno.test("A Sidecar's port-bound egress listener decides what a port reaches; the catch-all decides the rest", () => {
  const w = world().apply(networking("Sidecar", "example", "default", {
    egress: [
      { port: { number: 8080, protocol: "HTTP", name: "http" }, hosts: [`example/${RATINGS}`] },
      { hosts: ["other/*", "./*"] },
    ],
  }));
  const proxy = envoySidecar("example", "10.0.2.1");
  const push = w.push();
  const rds = run(envoyRdsGenerator, proxy, push);
  const hosts = (rds.byName.get("8080")!.virtual_hosts as Obj[]).map((h) => h.name);
  assert.ok(hosts.includes(`${RATINGS}:8080`));
  assert.ok(!hosts.includes("reviews.other.svc.cluster.local:8080"), "the 8080 listener does not import it");
  const lds = run(envoyLdsGenerator, proxy, push);
  assert.ok(lds.names.includes("10.96.0.9_6379"), "other ports of other/* come from the catch-all listener");
});

Deno.test("Listener conflicts keep the first claimant and are counted in the discovery_conflict_* gauges", async () => {
  const tcp = (name: string, port: number, extra: Record<string, unknown> = {}) =>
    networking("ServiceEntry", "example", name, {
      hosts: [`${name}.example.svc.cluster.local`],
      location: "MESH_INTERNAL",
      resolution: "STATIC",
      ports: [{ number: port, name: "tcp", protocol: "TCP" }],
      ...extra,
    });
  const w = world().apply(
    tcp("a-raw", 8080), // wants the wildcard 8080 listener the HTTP services hold
    tcp("b-raw", 7777),
    tcp("c-raw", 7777), // wants the wildcard 7777 listener b-raw holds
    tcp("ratings-tcp", 9080, { workloadSelector: { labels: { app: "ratings" } } }),
  );
  const push = w.push();
  const metrics = new Metrics("discovery", { version: "t", tag: "t" });
  const conflicts = new ListenerConflicts();
  conflicts.bind(metrics);
  const outbound = run(envoyLdsGenerator, envoySidecar("example", "10.0.9.9"), push, { conflicts });
  assert.ok(outbound.names.includes("0.0.0.0_7777"));
  assert.deepEqual(
    conflicts.keys("discovery_conflict_outbound_listener_tcp_over_current_http"),
    [
      "0.0.0.0_8080 a-raw.example.svc.cluster.local",
    ],
  );
  assert.ok(
    conflicts.keys("discovery_conflict_outbound_listener_tcp_over_current_tcp")
      .includes("0.0.0.0_7777 c-raw.example.svc.cluster.local"),
  );
  // The ratings workload (10.0.2.1) backs an HTTP service and a TCP one on 9080: the first (by hostname) wins.
  run(envoyLdsGenerator, envoySidecar("example", "10.0.2.1"), push, { conflicts });
  assert.equal(conflicts.count("discovery_conflict_inbound_listener"), 1);
  const text = await metrics.render();
  assert.match(text, /^discovery_conflict_outbound_listener_tcp_over_current_tcp [1-9]\d*$/m);
  assert.match(text, /^discovery_conflict_inbound_listener 1$/m);
});

Deno.test("A sidecar whose addresses no service endpoint has is counted in discovery_no_ip, once", async () => {
  const push = world().push();
  const metrics = new Metrics("discovery", { version: "t", tag: "t" });
  const conflicts = new ListenerConflicts();
  conflicts.bind(metrics);
  const client = envoySidecar("example", "10.0.9.9");
  run(envoyLdsGenerator, client, push, { conflicts });
  run(envoyLdsGenerator, client, push, { conflicts });
  run(envoyLdsGenerator, envoySidecar("example", "10.0.2.1"), push, { conflicts });
  assert.deepEqual(conflicts.keys("discovery_no_ip"), [client.id]);
  assert.match(await metrics.render(), /^discovery_no_ip 1$/m);
  new ListenerConflicts().bind(metrics);
  assert.match(
    await metrics.render(),
    /^discovery_no_ip 0$/m,
    "the next snapshot's conflicts start from none",
  );
});

Deno.test("Sidecars whose route plans are equal get equal keys and equal bytes; a namespace's short names give another key", () => {
  const push = world().push();
  const generated = (proxy: Proxy) => run(envoyRdsGenerator, proxy, push, { names: ["8080"] });
  const [a, b] = [generated(envoySidecar("example")), generated(envoySidecar("example", "10.9.9.7"))];
  const [c, d] = [generated(envoySidecar("canary")), generated(envoySidecar("other", "10.9.9.8"))];
  const keyOf = (g: ReturnType<typeof generated>) => g.cacheable.get("8080")!.key.id;
  assert.equal(keyOf(a), keyOf(b));
  assert.ok(Buffer.from(a.bytes.get("8080")!).equals(b.bytes.get("8080")!));
  // `canary` owns no service, `other` owns reviews.other and `example` ratings: three sets of short names.
  assert.equal(new Set([keyOf(a), keyOf(c), keyOf(d)]).size, 3);
  assert.ok(!Buffer.from(a.bytes.get("8080")!).equals(c.bytes.get("8080")!));
  // A later snapshot that plans the same routes names them alike, so the response cache keeps its entry.
  const again = run(envoyRdsGenerator, envoySidecar("canary"), world().push(), { names: ["8080"] });
  assert.equal(again.cacheable.get("8080")!.key.id, keyOf(c));
  const { plan, dependsOn } = planRouteConfig(envoySidecar("canary"), push, 8080);
  assert.deepEqual(c.cacheable.get("8080")!.key.dependsOn, dependsOn);
  assert.equal(keyOf(c), cacheKey(TYPE_URL.route, ["envoy", routeConfigKeyId(push, plan)], dependsOn).id);
});

Deno.test("The route configurations of many namespaces sort their services, plan and digest each virtual host they share once per snapshot", () => {
  const push = world().push();
  const namespaces = ["canary", "n1", "n2", "n3", "n4", "n5"];
  for (const ns of namespaces) run(envoyRdsGenerator, envoySidecar(ns), push, { names: ["8080"] });
  const hosts = planRouteConfig(envoySidecar("canary"), push, 8080).plan.hosts.length;
  // One key per host as every namespace without own services sees it: not one per host and namespace.
  assert.equal(push.derived.stats()["rds.hostDigests"], hosts);
  assert.equal(push.derived.stats()["rds.routedServices"], 1, "their shared service list is sorted once");
  assert.equal(push.derived.stats()["rds.foreignHosts"], 1, "and planned once");
  run(envoyRdsGenerator, envoySidecar("example"), push, { names: ["8080"] });
  assert.equal(
    push.derived.stats()["rds.hostDigests"],
    hosts + 1,
    "example adds only its own service's host",
  );
});

Deno.test("Each namespace's route configuration lists every host in hostname order, short names only for its own services", () => {
  const push = world().push();
  const servicesOn8080 = push.services()
    .filter((s) => s.ports.some((p) => p.port === 8080 && p.protocol === "HTTP"))
    .sort((a, b) => a.hostname < b.hostname ? -1 : 1);
  // `example` owns ratings, `other` owns reviews.other, `canary` owns nothing: each order of first use.
  for (const order of [["example", "canary", "other"], ["canary", "other", "example"]]) {
    const round = world().push();
    for (const ns of order) {
      const hosts = run(envoyRdsGenerator, envoySidecar(ns), round, { names: ["8080"] }).byName.get("8080")!
        .virtual_hosts as Obj[];
      assert.deepEqual(
        hosts.slice(0, -1).map((h) => h.domains),
        servicesOn8080.map((s) => virtualHostDomains(s, 8080, ns)),
        `${ns} after ${order.slice(0, order.indexOf(ns)).join() || "none"}`,
      );
    }
  }
  assert.ok(servicesOn8080.length >= 2);
});

Deno.test("A short name another host claims stays with the host first in order, in every namespace", () => {
  // The ServiceEntry host `ratings` sorts before ratings.example…, so it keeps `ratings` in `example` too.
  const push = world().apply(
    networking("ServiceEntry", "canary", "bare-ratings", {
      hosts: ["ratings"],
      location: "MESH_EXTERNAL",
      resolution: "DNS",
      ports: [{ number: 8080, name: "http", protocol: "HTTP" }],
    }),
  ).push();
  const domainsIn = (ns: string) => {
    const hosts = run(envoyRdsGenerator, envoySidecar(ns), push, { names: ["8080"] }).byName.get("8080")!
      .virtual_hosts as Obj[];
    return new Map(hosts.map((h) => [h.name as string, h.domains as string[]]));
  };
  const other = domainsIn("other");
  const example = domainsIn("example");
  assert.deepEqual(example.get("ratings:8080"), ["ratings", "ratings:8080"]);
  assert.deepEqual(other.get("ratings:8080"), ["ratings", "ratings:8080"]);
  assert.ok(!example.get(`${RATINGS}:8080`)!.includes("ratings"), "ratings.example loses its short name");
  assert.ok(example.get(`${RATINGS}:8080`)!.includes("ratings.example"));
  const all = [...example.values()].flat();
  assert.equal(new Set(all).size, all.length, "no domain listed twice");
});

Deno.test("Sidecars that share planned routes in one snapshot still get the routes their namespace and labels select", () => {
  const push = world().apply(
    networking("VirtualService", "example", "ratings", {
      hosts: ["ratings"],
      http: [
        {
          match: [{ sourceNamespace: "canary" }],
          route: [{ destination: { host: "ratings", subset: "canary" } }],
        },
        {
          match: [{ sourceLabels: { track: "beta" } }],
          route: [{ destination: { host: "ratings", subset: "beta" } }],
        },
        { route: [{ destination: { host: "ratings" } }] },
      ],
    }),
  ).push();
  const clustersOf = (proxy: Proxy) => {
    const hosts = run(envoyRdsGenerator, proxy, push, { names: ["8080"] }).byName.get("8080")!
      .virtual_hosts as Obj[];
    const ratings = hosts.find((h) => h.name === `${RATINGS}:8080`)!;
    return (ratings.routes as Obj[]).map((r) => (r.route as Obj).cluster);
  };
  const domainsOf = (proxy: Proxy) => {
    const hosts = run(envoyRdsGenerator, proxy, push, { names: ["8080"] }).byName.get("8080")!
      .virtual_hosts as Obj[];
    return hosts.find((h) => h.name === `${RATINGS}:8080`)!.domains as string[];
  };
  // Domain lists are shared between namespaces too: only the service's own namespace gets its short name.
  assert.ok(!domainsOf(envoySidecar("canary")).includes("ratings"));
  assert.ok(domainsOf(envoySidecar("example")).includes("ratings"));
  assert.ok(!domainsOf(envoySidecar("other", "10.9.9.8")).includes("ratings"));
  const plain = `outbound|8080||${RATINGS}`;
  // Each order, so a plan remembered for one proxy is never handed to another it does not fit.
  for (let round = 0; round < 2; round++) {
    const proxies = [
      envoySidecar("example"),
      envoySidecar("canary"),
      envoySidecar("other", "10.9.9.8", { track: "beta" }),
    ];
    const expected = [[plain], [`outbound|8080|canary|${RATINGS}`, plain], [
      `outbound|8080|beta|${RATINGS}`,
      plain,
    ]];
    const order = round === 0 ? [0, 1, 2] : [2, 1, 0];
    for (const i of order) {
      assert.deepEqual(clustersOf(proxies[i]), expected[i], `proxy ${i}, round ${round}`);
    }
  }
});

Deno.test("Envoy LDS listens on the VIP of the proxy's own cluster for a hostname several clusters define", async () => {
  const { MemoryRegistry } = await import("../../registry/memory_registry.ts");
  const { parseProxy } = await import("../../model/proxy.ts");
  const w = world();
  const remote = new MemoryRegistry({ provider: "Orchestrator", clusterId: "c2" });
  w.registry.addRegistry(remote, { remote: true });
  const local = w.registry.getService("reviews.other.svc.cluster.local")!;
  remote.addService({
    ...local,
    addresses: ["10.97.0.9"],
    attributes: { ...local.attributes, clusterId: "c2" },
  });
  const push = w.push();
  const inCluster = (cluster: string) =>
    parseProxy({
      id: "sidecar~10.0.2.1~app.example~example.svc.cluster.local",
      metadata: { NAMESPACE: "example", INSTANCE_IPS: "10.0.2.1", CLUSTER_ID: cluster },
    });
  const tcpListeners = (cluster: string) =>
    run(envoyLdsGenerator, inCluster(cluster), push).names.filter((n) => n.endsWith("_6379"));
  assert.deepEqual(tcpListeners("c2"), ["10.97.0.9_6379"]);
  assert.deepEqual(tcpListeners("c1"), ["10.96.0.9_6379"]);
});
