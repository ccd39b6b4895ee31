import assert from "node:assert/strict";
import { formatPgvViolations, validatePgvAny } from "@mesh/proto/pgv_validate";
import { structToJson } from "@mesh/proto/struct_json";
import { parseResource } from "@mesh/shared/config/validate_resource";
import { parse } from "yaml";
import { GREETER, networking, run, World } from "../_test_world.ts";
import { envoyResources, envoySidecar } from "./_test_envoy.ts";
import { BLACK_HOLE_CLUSTER, envoyCdsGenerator, PASSTHROUGH_CLUSTER } from "./envoy_cds.ts";
import { HTTP_PROTOCOL_OPTIONS_NAME } from "./cluster_protocol.ts";

type Obj = Record<string, unknown>;
const clusters = (proxy = envoySidecar()) =>
  run(envoyCdsGenerator, proxy, new World().apply(...envoyResources()).push());
const tlsContext = (socket: unknown) => (socket as { typed_config: Obj }).typed_config;

Deno.test("Envoy CDS gives every visible service port a cluster, one more per subset, and the two catch-alls", () => {
  const { names } = clusters();
  for (
    const name of [
      `outbound|7070||${GREETER}`,
      `outbound|7070|v1|${GREETER}`,
      `outbound|7070|v2|${GREETER}`,
      "outbound|8080||ratings.example.svc.cluster.local",
      "outbound|8080|plain|ratings.example.svc.cluster.local",
      "outbound|5432||db.example.com",
      "outbound|443||api.example.com",
      "outbound|443||*.passthrough.example.com",
      BLACK_HOLE_CLUSTER,
      PASSTHROUGH_CLUSTER,
    ]
  ) {
    assert.ok(names.includes(name), `${name} in ${names.join(", ")}`);
  }
  assert.equal(new Set(names).size, names.length, "no cluster twice");
});

Deno.test("Envoy CDS answers a request for named clusters with those alone", () => {
  const proxy = envoySidecar();
  const push = new World().apply(...envoyResources()).push();
  const { names } = run(envoyCdsGenerator, proxy, push, { names: [`outbound|7070|v1|${GREETER}`, "nope"] });
  assert.deepEqual(names, [`outbound|7070|v1|${GREETER}`]);
});

Deno.test("Envoy CDS picks discovery by resolution", async (t) => {
  const { byName } = clusters();
  await t.step("mesh services are EDS clusters fed over ADS", () => {
    const c = byName.get(`outbound|7070|v1|${GREETER}`)!;
    assert.equal(c.type, "EDS");
    assert.equal((c.eds_cluster_config as Obj).service_name, `outbound|7070|v1|${GREETER}`);
  });
  await t.step("DNS services resolve their endpoints' names, weighted", () => {
    const c = byName.get("outbound|5432||db.example.com")!;
    assert.equal(c.type, "STRICT_DNS");
    const text = JSON.stringify(c.load_assignment);
    assert.ok(text.includes("db1.example.com") && text.includes("db2.example.com"), text);
    assert.ok(text.includes('"value":3'), text);
  });
  await t.step("a DNS service without endpoints resolves its own host", () => {
    const c = byName.get("outbound|443||api.example.com")!;
    assert.equal(c.type, "STRICT_DNS");
    assert.ok(JSON.stringify(c.load_assignment).includes('"address":"api.example.com"'));
  });
  await t.step("passthrough services and PassthroughCluster go to the original destination", () => {
    for (const name of ["outbound|443||*.passthrough.example.com", PASSTHROUGH_CLUSTER]) {
      const c = byName.get(name)!;
      assert.equal(c.type, "ORIGINAL_DST", name);
      assert.equal(c.lb_policy, "CLUSTER_PROVIDED", name);
    }
  });
  await t.step("BlackHoleCluster is static with nowhere to send", () => {
    const c = byName.get(BLACK_HOLE_CLUSTER)!;
    assert.equal(c.type, "STATIC");
    assert.equal(c.load_assignment, undefined);
  });
});

Deno.test("Envoy CDS carries the DestinationRule's TLS mode", async (t) => {
  const { byName } = clusters();
  await t.step(
    "ISTIO_MUTUAL: SDS default and ROOTCA from the agent, SAN match on the service's identities",
    () => {
      const ctx = tlsContext(
        byName.get("outbound|8080||ratings.example.svc.cluster.local")!.transport_socket,
      );
      const common = ctx.common_tls_context as Obj;
      assert.equal((common.tls_certificate_sds_secret_configs as Obj[])[0].name, "default");
      const validation = common.combined_validation_context as Obj;
      assert.equal((validation.validation_context_sds_secret_config as Obj).name, "ROOTCA");
      assert.ok(
        JSON.stringify(validation.default_validation_context).includes(
          "spiffe://cluster.local/ns/example/sa/ratings",
        ),
      );
      assert.equal(ctx.sni, "outbound_.8080_._.ratings.example.svc.cluster.local");
    },
  );
  await t.step("a subset's DISABLE overrides the rule's mTLS", () => {
    const c = byName.get("outbound|8080|plain|ratings.example.svc.cluster.local")!;
    assert.equal(c.transport_socket, undefined);
    assert.equal(c.transport_socket_matches, undefined);
  });
  await t.step("SIMPLE: the CA file, SANs and SNI the rule names", () => {
    const ctx = tlsContext(byName.get("outbound|5432||db.example.com")!.transport_socket);
    assert.equal(ctx.sni, "db");
    const text = JSON.stringify(ctx.common_tls_context);
    assert.ok(text.includes("/etc/certs/ca.pem") && text.includes("db.example.com"), text);
    assert.ok(!text.includes("tls_certificates"), "SIMPLE presents no client certificate");
  });
  await t.step("MUTUAL: the client certificate and key files too", () => {
    const text = JSON.stringify(tlsContext(byName.get("outbound|443||api.example.com")!.transport_socket));
    assert.ok(text.includes("/c.pem") && text.includes("/k.pem"), text);
  });
  await t.step("no rule: automatic mTLS to endpoints marked for the mesh, plaintext to the rest", () => {
    const matches = byName.get(`outbound|7070||${GREETER}`)!.transport_socket_matches as Obj[];
    assert.equal(matches.length, 2);
    assert.deepEqual(structToJson(matches[0].match), { tlsMode: "istio" });
    assert.equal((tlsContext(matches[0].transport_socket).common_tls_context as Obj) !== undefined, true);
    assert.deepEqual(structToJson(matches[1].match), {});
  });
  await t.step("services outside the mesh get no automatic mTLS", () => {
    const c = byName.get("outbound|443||*.passthrough.example.com")!;
    assert.equal(c.transport_socket_matches, undefined);
  });
});

Deno.test("Envoy CDS speaks HTTP/2 to gRPC ports and applies connection options", () => {
  const { byName } = clusters();
  const grpc = byName.get(`outbound|7070||${GREETER}`)!.typed_extension_protocol_options as Obj;
  assert.ok(JSON.stringify(grpc[HTTP_PROTOCOL_OPTIONS_NAME]).includes("http2_protocol_options"));
  const db = byName.get("outbound|5432||db.example.com")!;
  const text = JSON.stringify(db);
  assert.ok(text.includes("idle_timeout") && text.includes("max_requests_per_connection"), text);
  assert.ok(JSON.stringify(db.upstream_connection_options).includes("keepalive_probes"));
  assert.equal(
    byName.get("outbound|8080||ratings.example.svc.cluster.local")!.typed_extension_protocol_options,
    undefined,
  );
});

Deno.test("Envoy CDS of a DestinationRule whose tcpKeepalive is written empty builds the cluster without keepalive", () => {
  // The rule passed validation with `tcpKeepalive: null` as unset, and CDS read `.time` of it and threw.
  const { resource } = parseResource(parse(`
apiVersion: networking.istio.io/v1beta1
kind: DestinationRule
metadata: { name: db, namespace: example }
spec:
  host: db.example.com
  trafficPolicy:
    connectionPool:
      tcp:
        maxConnections: 7
        tcpKeepalive:
`));
  assert.ok(resource !== undefined);
  const push = new World().apply(...envoyResources(), resource).push();
  const db = run(envoyCdsGenerator, envoySidecar(), push).byName.get("outbound|5432||db.example.com")!;
  assert.equal(db.upstream_connection_options, undefined);
  assert.ok(
    JSON.stringify(db.circuit_breakers).includes('"max_connections":{"value":7}'),
    JSON.stringify(db),
  );
});

Deno.test("Envoy CDS of a WorkloadEntry whose service account no SPIFFE id can carry expects the reference's SAN for it", () => {
  // Istio 1.9 takes a WorkloadEntry's service account as free text and forms the SAN unchecked; CDS threw
  // building it for every proxy that saw the service.
  const { resource } = parseResource({
    apiVersion: "networking.istio.io/v1beta1",
    kind: "WorkloadEntry",
    metadata: { name: "ratings-1", namespace: "example" },
    spec: {
      address: "10.0.2.1",
      labels: { app: "ratings", "security.istio.io/tlsMode": "istio" },
      serviceAccount: "team/ratings api",
    },
  });
  assert.ok(resource !== undefined);
  const push = new World().apply(...envoyResources(), resource).push();
  const ratings = run(envoyCdsGenerator, envoySidecar(), push).byName.get(
    "outbound|8080||ratings.example.svc.cluster.local",
  )!;
  const validation =
    (tlsContext(ratings.transport_socket).common_tls_context as Obj).combined_validation_context;
  assert.deepEqual(
    ((validation as Obj).default_validation_context as Obj).match_typed_subject_alt_names,
    [{ san_type: "URI", matcher: { exact: "spiffe://cluster.local/ns/example/sa/team/ratings api" } }],
  );
});

Deno.test("Envoy CDS gives a sidecar an inbound cluster per port of its own workload", () => {
  const { byName, names } = clusters(envoySidecar("example", "10.0.2.1"));
  const inbound = byName.get("inbound|9080||")!;
  assert.equal(inbound.type, "STATIC");
  assert.ok(JSON.stringify(inbound.load_assignment).includes('"address":"127.0.0.1"'));
  assert.deepEqual(names.filter((n) => n.startsWith("inbound|")), ["inbound|9080||"]);
  assert.deepEqual(clusters().names.filter((n) => n.startsWith("inbound|")), [], "other proxies get none");
});

Deno.test("Every Envoy cluster encodes with Envoy's schema and passes its validation rules", () => {
  const { bytes } = clusters(envoySidecar("example", "10.0.2.1"));
  assert.equal(bytes.size, 11, "8 outbound, 1 inbound, 2 catch-alls");
  for (const [name, encoded] of bytes) {
    const violations = validatePgvAny(encoded);
    assert.equal(violations.length, 0, `${name}: ${formatPgvViolations(violations)}`);
  }
});

Deno.test("Envoy CDS keys change with what a cluster reads, and only then", () => {
  const world = new World().apply(...envoyResources());
  const key = (push = world.push()) =>
    run(envoyCdsGenerator, envoySidecar(), push).cacheable.get("outbound|5432||db.example.com")!.key.id;
  const before = key();
  assert.equal(key(), before, "a new snapshot of the same inputs keeps the key");
  world.apply(
    ...envoyResources().filter((r) => r.meta.name === "db").map((r) => ({
      ...r,
      spec: { host: "db.example.com", trafficPolicy: { tls: { mode: "DISABLE" } } },
    })),
  );
  assert.notEqual(key(), before, "a changed DestinationRule changes the key");
});

Deno.test("Sidecars of one namespace share each outbound cluster's key, made once", () => {
  const push = new World().apply(...envoyResources()).push();
  const one = run(envoyCdsGenerator, envoySidecar("example", "10.9.9.1"), push).cacheable;
  const two = run(envoyCdsGenerator, envoySidecar("example", "10.9.9.2"), push).cacheable;
  const outbound = `outbound|7070|v1|${GREETER}`;
  // The very same key object: the plan's canonical JSON was made once, not once per proxy.
  assert.equal(one.get(outbound)!.key, two.get(outbound)!.key);
  const other = run(envoyCdsGenerator, envoySidecar("other", "10.9.9.3"), push).cacheable;
  assert.equal(other.get(outbound)?.key, one.get(outbound)!.key, "a namespace that sees the mesh alike too");
});

Deno.test("A namespace with a DestinationRule of its own for another's host gets its own cluster plans", () => {
  const world = new World().apply(...envoyResources());
  const cluster = `outbound|7070|v1|${GREETER}`;
  const sees = (push: ReturnType<World["push"]>, namespace: string, ip: string) =>
    run(envoyCdsGenerator, envoySidecar(namespace, ip), push).cacheable.get(cluster)!.key.id;
  const plain = sees(world.push(), "other", "10.9.9.3");
  world.apply(networking("DestinationRule", "mine", "greeter", {
    host: GREETER,
    trafficPolicy: { tls: { mode: "DISABLE" } },
    subsets: [{ name: "v1", labels: { version: "v1" } }],
  }));
  // Either asking first, within one snapshot: neither may be handed the other's plans.
  for (const order of [["mine", "other"], ["other", "mine"]]) {
    const push = world.push();
    const ids = Object.fromEntries(order.map((ns, i) => [ns, sees(push, ns, `10.9.9.${4 + i}`)]));
    assert.notEqual(ids.mine, plain, `its own rule applies to it (${order})`);
    assert.equal(ids.other, plain, `and not to the others (${order})`);
  }
});

Deno.test("Envoy CDS sets DISCOVERY_INITIAL_FETCH_TIMEOUT on EDS clusters' ADS config source only when it is given", async (t) => {
  const world = new World().apply(...envoyResources());
  const edsConfig = (cluster: Obj | undefined) =>
    (cluster?.eds_cluster_config as Obj | undefined)?.eds_config as Obj | undefined;
  const eds = `outbound|7070||${GREETER}`;
  const dns = "outbound|5432||db.example.com";
  const unset = run(envoyCdsGenerator, envoySidecar(), world.push());

  await t.step("absent by default, so Envoy's own default applies, as the reference leaves it", () => {
    for (const [name, cluster] of unset.byName) {
      assert.equal(edsConfig(cluster)?.initial_fetch_timeout, undefined, name);
    }
  });

  for (
    const [given, ns, expected] of [
      ["1.5s", 1_500_000_000n, { seconds: "1", nanos: 500_000_000 }],
      ["0s", 0n, {}],
    ] as const
  ) {
    await t.step(
      `given as ${given}: on every EDS cluster, valid by Envoy's schema, and in the cache key`,
      () => {
        const set = run(envoyCdsGenerator, envoySidecar(), world.push({ initialFetchTimeoutNs: ns }));
        assert.deepEqual(edsConfig(set.byName.get(eds)), {
          ads: {},
          resource_api_version: "V3",
          initial_fetch_timeout: expected,
        });
        // DNS, static and original-destination clusters have no config source to time out.
        assert.equal(set.byName.get(dns)?.eds_cluster_config, undefined);
        for (const [name, cluster] of set.byName) {
          const withoutTimeout = JSON.parse(
            JSON.stringify(cluster, (k, v) => k === "initial_fetch_timeout" ? undefined : v),
          );
          assert.deepEqual(withoutTimeout, unset.byName.get(name), `${name} differs only by the timeout`);
          const violations = validatePgvAny(set.bytes.get(name)!);
          assert.equal(violations.length, 0, `${name}: ${formatPgvViolations(violations)}`);
        }
        assert.notEqual(set.cacheable.get(eds)!.key.id, unset.cacheable.get(eds)!.key.id);
      },
    );
  }
});
