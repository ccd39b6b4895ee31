import assert from "node:assert/strict";
import fc from "fast-check";
import { loadEnvoySchema } from "@mesh/proto/envoy_schema";
import { decodeDiscoveryRequest } from "@mesh/proto/discovery_request";
import { NAME_TABLE_TYPE_URL } from "@mesh/proto/name_table";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { InvalidNodeError, parseProxy, type Proxy } from "../model/proxy.ts";
import type { SecretStore } from "../model/secret_store.ts";
import { MemoryRegistry } from "../registry/memory_registry.ts";
import { service } from "../registry/_test_support.ts";
import { envoyResources, pushWithSecrets, shopGateway, shopVirtualService } from "./envoy/_test_envoy.ts";
import { envoyGenerators } from "./envoy/envoy_generators.ts";
import { grpcGenerators } from "./grpc_generators.ts";
import { nameTableGenerator } from "./name_table.ts";
import { greeterSplit, MESH, networking, run, World } from "./_test_world.ts";

const schema = loadEnvoySchema();
const REQUEST = schema.lookupType("envoy.service.discovery.v3.DiscoveryRequest");

/** A mesh where node metadata matters: selectors, EnvoyFilter proxy matches, two clusters, tracing. */
function mesh() {
  const world = new World().apply(
    ...envoyResources(),
    greeterSplit(50, 50),
    shopGateway(),
    shopVirtualService(),
    networking("Sidecar", "billing", "default", { egress: [{ hosts: ["./*", "example/*"] }] }),
    networking("EnvoyFilter", "mesh-system", "by-version", {
      configPatches: [{
        applyTo: "CLUSTER",
        match: { proxy: { proxyVersion: "^1\\.9.*", metadata: { FOO: "bar" } } },
        patch: { operation: "MERGE", value: { connect_timeout: "1s" } },
      }],
    }),
    networking("AuthorizationPolicy", "example", "ratings", {
      selector: { matchLabels: { app: "ratings" } },
      rules: [{ from: [{ source: { principals: ["cluster.local/ns/example/sa/a"] } }] }],
    }),
    networking("PeerAuthentication", "example", "ratings", {
      selector: { matchLabels: { app: "ratings" } },
      mtls: { mode: "STRICT" },
    }),
  );
  // A service both clusters define, so a proxy's CLUSTER_ID picks among its addresses.
  const c2 = new MemoryRegistry({ provider: "Orchestrator", clusterId: "c2" });
  c2.addService(service("ratings.example.svc.cluster.local", "example", {
    addresses: ["10.97.0.1"],
    ports: [{ name: "tcp", port: 9000, protocol: "TCP" }],
    attributes: { serviceRegistry: "Orchestrator", clusterId: "c2", name: "ratings", namespace: "example" },
  }));
  world.registry.addRegistry(c2);
  const secrets: SecretStore = {
    get: () => ({ certChainPem: "C", privateKeyPem: "K", caCertPem: "CA" }),
    onChange: () => () => {},
  };
  return pushWithSecrets(world, secrets, {
    mesh: { ...MESH, accessLogFile: "/dev/stdout", enableTracing: true },
  });
}

// Struct values as the wire carries them: a double may be NaN or infinite.
const num = fc.oneof(
  fc.double(),
  fc.constantFrom(NaN, Infinity, -0, 1e308, 2 ** 53 + 1, 0.5, 100, 101, 2 ** 32),
);
const str = fc.oneof(
  fc.string(),
  fc.constantFrom(
    "",
    "true",
    "grpc",
    "REDIRECT",
    "10.0.0.1",
    "::1",
    "c1",
    "c2",
    "example",
    "(a+)+$",
    "a".repeat(3000),
  ),
  fc.constantFrom("constructor", "__proto__", "toString", "hasOwnProperty"),
);
const { value } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    num,
    str,
    fc.array(tie("value"), { maxLength: 3 }),
    tie("object"),
  ),
  object: fc.dictionary(
    fc.oneof(str, fc.constantFrom("tracing", "sampling", "customTags", "literal")),
    tie("value"),
    {
      maxKeys: 4,
    },
  ),
}));
/** A well-formed value for `good` most of the time, anything at all otherwise. */
const mostly = <T>(good: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 15, arbitrary: good }, { weight: 1, arbitrary: value });
const tracing = fc.record({
  sampling: mostly(num),
  maxPathTagLength: mostly(fc.oneof(fc.nat(), num)),
  customTags: mostly(fc.dictionary(
    str,
    mostly(fc.oneof(
      fc.record({ literal: fc.record({ value: mostly(str) }) }),
      fc.record({ environment: fc.record({ name: str, defaultValue: str }, { requiredKeys: [] }) }),
      fc.record({ header: fc.record({ name: mostly(str) }) }),
    )),
    { maxKeys: 3 },
  )),
}, { requiredKeys: [] });
const metadata = fc.record({
  NAMESPACE: mostly(fc.constantFrom("example", "billing", "mesh-system", "other")),
  LABELS: mostly(fc.dictionary(
    fc.oneof(fc.constantFrom("app", "version", "security.istio.io/tlsMode"), str),
    fc.oneof(fc.constantFrom("ratings", "ingress", "istio", "v1"), str, num, fc.boolean()),
    { maxKeys: 6 },
  )),
  CLUSTER_ID: mostly(str),
  INTERCEPTION_MODE: mostly(fc.constantFrom("REDIRECT", "TPROXY", "NONE")),
  GENERATOR: mostly(fc.constantFrom("grpc", "default", "")),
  NETWORK: mostly(str),
  MESH_VERSION: mostly(fc.oneof(fc.constantFrom("1.9.0", "1.8"), str)),
  INSTANCE_IPS: mostly(
    fc.oneof(fc.constantFrom("10.0.2.1", "::1,10.0.0.1"), fc.array(fc.ipV4()).map((a) => a.join(","))),
  ),
  PROXY_CONFIG: mostly(fc.record({ tracing: mostly(tracing) }, { requiredKeys: [] })),
  DNS_CAPTURE: mostly(fc.constantFrom("true", true)),
  DNS_AUTO_ALLOCATE: mostly(fc.constantFrom("true", true)),
  TLS_CLIENT_CERT_CHAIN: value,
  FOO: mostly(fc.constant("bar")),
  SERVICE_ACCOUNT: mostly(str),
  other: fc.dictionary(str, value, { maxKeys: 3 }),
}, { requiredKeys: [] }).map(({ other, ...named }) => ({ ...other, ...named }));
const node = fc.record({
  id: mostly(
    fc.tuple(
      fc.constantFrom("sidecar", "router", "sidecar"),
      fc.oneof(fc.constantFrom("10.0.2.1", "10.8.0.1"), fc.ipV4(), fc.ipV6()),
      fc.constantFrom("app.example", "ingress-1.example", "app.billing", "a.b.c"),
      fc.constantFrom("example.svc.cluster.local", "svc.", "a"),
    ).map((parts) => parts.join("~")),
  ),
  cluster: str,
  metadata,
  locality: fc.option(fc.record({ region: str, zone: str, sub_zone: str }), { nil: undefined }),
});

function toValue(v: unknown): unknown {
  if (v === null) return { nullValue: 0 };
  if (typeof v === "boolean") return { boolValue: v };
  if (typeof v === "number") return { numberValue: v };
  if (typeof v === "string") return { stringValue: v };
  if (Array.isArray(v)) return { listValue: { values: v.map(toValue) } };
  return { structValue: toStruct(v as Record<string, unknown>) };
}

function toStruct(o: Record<string, unknown>): unknown {
  return { fields: Object.fromEntries(Object.entries(o).map(([k, v]) => [k, toValue(v)])) };
}

/** The node as the server reads it: encoded in a DiscoveryRequest and decoded. */
function decodedNode(n: { id: unknown; metadata: Record<string, unknown> }) {
  const id = typeof n.id === "string" ? n.id : JSON.stringify(n.id) ?? "";
  const bytes = REQUEST.encode(REQUEST.fromObject({
    type_url: TYPE_URL.listener,
    node: { ...n, id, metadata: toStruct(n.metadata) },
  })).finish();
  return decodeDiscoveryRequest(bytes, schema).node!;
}

/** Everything a proxy can ask for, as the server would encode it. */
function generateAll(proxy: Proxy, push: ReturnType<typeof mesh>): void {
  const family = new Map(
    (proxy.metadata.generator === "grpc" ? grpcGenerators() : envoyGenerators()).map((g) => [g.typeUrl, g]),
  );
  const lds = run(family.get(TYPE_URL.listener)!, proxy, push);
  const cds = run(family.get(TYPE_URL.cluster)!, proxy, push);
  const routes = JSON.stringify([...lds.byName.values()]).matchAll(/"route_config_name":"([^"]+)"/g);
  run(family.get(TYPE_URL.route)!, proxy, push, { names: [...new Set([...routes].map((m) => m[1]))] });
  run(family.get(TYPE_URL.endpoint)!, proxy, push, { names: cds.names });
  if (proxy.metadata.generator === "grpc") return;
  run(family.get(TYPE_URL.secret)!, proxy, push, { names: ["default", "ROOTCA", "kubernetes://shop-cert"] });
  nameTableGenerator(NAME_TABLE_TYPE_URL).generate(proxy, push, { names: [], full: true });
}

Deno.test("Any node a client sends is refused with InvalidNodeError or served by every generator without a throw", () => {
  // Found this way: a fractional PROXY_CONFIG.tracing.maxPathTagLength failed every LDS build of its proxy, and
  // CLUSTER_ID "constructor" read the Object function as a service's addresses.
  const push = mesh();
  let served = 0;
  fc.assert(
    fc.property(node, (n) => {
      let proxy: Proxy;
      try {
        proxy = parseProxy(decodedNode(n));
      } catch (error) {
        assert.ok(error instanceof InvalidNodeError, `${error} for ${JSON.stringify(n).slice(0, 300)}`);
        return;
      }
      served++;
      generateAll(proxy, push);
    }),
    { numRuns: 250, seed: 20240601 },
  );
  assert.ok(served > 100, `only ${served} of 250 nodes were accepted: the test exercises too few generators`);
});
