import assert from "node:assert/strict";
import fc from "fast-check";
import { type JsonPath as Path, placesOf } from "@mesh/shared/testing/json_places";
import { parseAllDocuments } from "yaml";
import { decodeAny } from "@mesh/proto/any_codec";
import { loadEnvoySchema } from "@mesh/proto/envoy_schema";
import { TYPE_URL } from "@mesh/proto/type_urls";
import type { Resource } from "@mesh/shared/config/resource";
import { parseResource } from "@mesh/shared/config/validate_resource";
import type { Proxy } from "../model/proxy.ts";
import type { SecretStore } from "../model/secret_store.ts";
import type { PushContext } from "../push/push_context.ts";
import { buildResources } from "../xds/response_builder.ts";
import { ShapeMemo } from "../xds/shape_memo.ts";
import { XdsCache } from "../xds/xds_cache.ts";
import { GeneratorRegistry } from "./generator.ts";
import { registerGrpcGenerators } from "./grpc_generators.ts";
import { grpcProxy, networking, richWorld, World } from "./_test_world.ts";
import {
  envoyResources,
  envoySidecar,
  ingressGateway,
  pushWithSecrets,
  shopGateway,
  shopVirtualService,
} from "./envoy/_test_envoy.ts";
import { registerEnvoyGenerators } from "./envoy/envoy_generators.ts";

/** Istio 1.9.9's validation dataset (provenance and licence: tests/fixtures/istio-1.9-validation/README.md). */
const CORPUS = new URL("../../tests/fixtures/istio-1.9-validation/", import.meta.url);

type Doc = Record<string, unknown>;

function corpusDocuments(): Doc[] {
  const docs: Doc[] = [];
  for (const entry of [...Deno.readDirSync(CORPUS)].sort((a, b) => a.name < b.name ? -1 : 1)) {
    if (!entry.name.endsWith(".yaml")) continue;
    for (const doc of parseAllDocuments(Deno.readTextFileSync(new URL(entry.name, CORPUS)))) {
      const value = doc.toJSON();
      if (value !== null && typeof value === "object" && !Array.isArray(value)) docs.push(value);
    }
  }
  return docs;
}

function documentOf(resource: Resource): Doc {
  const { gvk, meta, spec } = resource;
  return {
    apiVersion: `${gvk.group}/${gvk.version}`,
    kind: gvk.kind,
    metadata: { name: meta.name, namespace: meta.namespace },
    spec: JSON.parse(JSON.stringify(spec)),
  };
}

/** The meshes the generator tests build: the Envoy one with a gateway, and the gRPC one. */
function worldResources(): Resource[] {
  return [
    ...envoyResources(),
    shopGateway("MUTUAL"),
    shopVirtualService([{
      match: [{ uri: { prefix: "/api" } }],
      route: [{ destination: { host: "ratings" } }],
      timeout: "2s",
    }]),
    networking("Sidecar", "example", "default", {
      egress: [{ hosts: ["./*", "mesh-system/*"] }],
      ingress: [{
        port: { number: 7000, protocol: "HTTP", name: "http" },
        defaultEndpoint: "127.0.0.1:7070",
      }],
    }),
    ...richWorld().store.all().filter((r) => r.meta.name !== "greeter" || r.gvk.kind !== "WorkloadEntry"),
  ];
}

/** Strings that are valid somewhere and unusual everywhere. */
const STRINGS = [
  "",
  "*",
  "a",
  "*.com",
  "*.example.com",
  "example",
  "mesh-system",
  "ratings",
  "greeter",
  "ratings.example.svc.cluster.local",
  "greeter.example.svc.cluster.local",
  "shop.example.com",
  "api.example.com",
  "example/*",
  "./*",
  "*/*",
  "~/*",
  "example/ratings.example.svc.cluster.local",
  "v1",
  "v2",
  "shop",
  "shop-cert",
  "example/shop",
  "mesh",
  "/",
  "/api",
  "/a/b",
  ".*",
  "^/[a-z]+$",
  "(a|b)*c",
  "x-a",
  ":authority",
  "0.0.0.0",
  "0.0.0.0/0",
  "10.0.0.1",
  "10.0.0.0/8",
  "::1",
  "2001:db8::/32",
  "127.0.0.1:7070",
  "unix:///var/run/a.sock",
  "1s",
  "0s",
  "1ms",
  "0.001s",
  "1h",
  "315576000000s",
  "HTTP",
  "HTTP2",
  "HTTPS",
  "GRPC",
  "TCP",
  "TLS",
  "MONGO",
  "UDP",
  "ISTIO_MUTUAL",
  "SIMPLE",
  "MUTUAL",
  "PASSTHROUGH",
  "AUTO_PASSTHROUGH",
  "DISABLE",
  "STRICT",
  "PERMISSIVE",
  "STATIC",
  "DNS",
  "NONE",
  "MESH_INTERNAL",
  "MESH_EXTERNAL",
  "REGISTRY_ONLY",
  "ALLOW_ANY",
  "DENY",
  "ALLOW",
  "AUDIT",
  "CUSTOM",
  "ROUND_ROBIN",
  "LEAST_CONN",
  "RANDOM",
  "region1/zone1",
  "r/z/s",
  "spiffe://cluster.local/ns/example/sa/ingress",
  "cluster.local/ns/example/sa/x",
  "https://example.com/jwks",
  "ü日本語",
  "a".repeat(253),
  "x".repeat(5000),
  "a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p",
];

/** Numbers at and beyond the edges of what fields take. */
const NUMBERS = [
  0,
  1,
  -1,
  2,
  3,
  50,
  80,
  100,
  101,
  443,
  1000,
  7070,
  8080,
  65535,
  65536,
  2 ** 31 - 1,
  2 ** 32,
  2 ** 53 - 1,
  0.5,
  1e-9,
  1e20,
];

const unusualString = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...STRINGS) },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 6 }) },
);
const unusualNumber = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...NUMBERS) },
  { weight: 1, arbitrary: fc.integer() },
);
const unusualLeaf = fc.oneof(unusualString, unusualNumber, fc.boolean());

/** One change at one place: `place` picks the place, the kind of change is chosen by what is there. */
type Edit =
  | { readonly place: number; readonly op: "replace"; readonly value: unknown }
  | { readonly place: number; readonly op: "same-kind"; readonly pick: number; readonly value: unknown }
  | { readonly place: number; readonly op: "delete" }
  | { readonly place: number; readonly op: "grow"; readonly times: number };

const edit: fc.Arbitrary<Edit> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      place: fc.nat(),
      op: fc.constant("same-kind" as const),
      pick: fc.nat(),
      value: unusualLeaf,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      place: fc.nat(),
      op: fc.constant("replace" as const),
      value: fc.oneof(
        fc.constantFrom([], {}, [""], ["*"], null),
        fc.anything({ maxDepth: 2, maxKeys: 3 }),
      ),
    }),
  },
  { weight: 1, arbitrary: fc.record({ place: fc.nat(), op: fc.constant("delete" as const) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      place: fc.nat(),
      op: fc.constant("grow" as const),
      times: fc.constantFrom(2, 3, 10),
    }),
  },
);

function valueAt(value: unknown, at: Path): unknown {
  return at.reduce<unknown>((v, key) => (v as Record<string | number, unknown>)[key], value);
}

/** `value` with `at` changed by `change` (of the value there), or removed when `change` gives `undefined`. */
function changedAt(value: unknown, at: Path, change: (old: unknown) => unknown): unknown {
  if (at.length === 0) return change(value);
  if (Array.isArray(value)) {
    const copy = [...value];
    const next = changedAt(copy[at[0] as number], at.slice(1), change);
    if (next === undefined) copy.splice(at[0] as number, 1);
    else copy[at[0] as number] = next;
    return copy;
  }
  const copy = { ...(value as Doc) };
  const next = changedAt(copy[at[0]], at.slice(1), change);
  if (next === undefined) delete copy[at[0]];
  else copy[at[0]] = next;
  return copy;
}

/** A value of the old one's kind: strings for strings, numbers for numbers, an item changed in a list. */
function sameKind(old: unknown, pick: number, value: unknown): unknown {
  if (typeof old === "string") return typeof value === "string" ? value : STRINGS[pick % STRINGS.length];
  if (typeof old === "number") return typeof value === "number" ? value : NUMBERS[pick % NUMBERS.length];
  if (typeof old === "boolean") return !old;
  if (Array.isArray(old)) return pick % 2 === 0 ? [] : [...old, ...old];
  if (old !== null && typeof old === "object") {
    const keys = Object.keys(old);
    return pick % 3 === 0 || keys.length === 0
      ? {}
      : { ...old, [`${keys[pick % keys.length]}-${pick % 7}`]: value };
  }
  return value;
}

function applyEdit(doc: unknown, e: Edit): unknown {
  const places = placesOf(doc).slice(1);
  if (places.length === 0) return doc;
  const at = places[e.place % places.length];
  switch (e.op) {
    case "replace":
      return changedAt(doc, at, () => e.value);
    case "delete":
      return changedAt(doc, at, () => undefined);
    case "same-kind":
      return changedAt(doc, at, (old) => sameKind(old, e.pick, e.value));
    case "grow": {
      // The nearest list at or above the place, its items repeated.
      for (let n = at.length; n >= 0; n--) {
        const there = valueAt(doc, at.slice(0, n));
        if (Array.isArray(there)) {
          return changedAt(doc, at.slice(0, n), () => Array.from({ length: e.times }, () => there).flat());
        }
      }
      return doc;
    }
  }
}

/** Moves a document to where the test proxies see it: namespace `example`, a Gateway onto the gateway proxy. */
function relocated(doc: unknown, where: number): unknown {
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) return doc;
  const d = doc as Doc;
  const namespace = ["example", "mesh-system", "billing"][where % 3];
  const metadata = { ...(d.metadata as Doc ?? {}), namespace };
  const spec = d.kind === "Gateway" && d.spec !== null && typeof d.spec === "object"
    ? { ...d.spec as Doc, selector: { app: "ingress" } }
    : d.spec;
  return { ...d, metadata, spec };
}

const SECRETS: SecretStore = {
  get: (namespace, name) =>
    namespace === "example" && name.startsWith("shop")
      ? { certChainPem: "CERT CHAIN", privateKeyPem: "KEY", caCertPem: "CA" }
      : undefined,
  onChange: () => () => {},
};

/** The sidecar, gateway and proxyless gRPC client every generation is made for. */
const PROXIES: readonly Proxy[] = [
  envoySidecar("example", "10.0.2.1", { app: "ratings" }),
  envoySidecar("billing", "10.0.9.1", { app: "billing" }),
  ingressGateway(),
  grpcProxy("example", { app: "greeter" }),
];

const SCHEMA = loadEnvoySchema();
const GENERATORS = registerGrpcGenerators(registerEnvoyGenerators(new GeneratorRegistry<PushContext>()));

/** The slowest generation seen so far. */
interface Slowest {
  ms: number;
  what: string;
  input: string;
}

function namesIn(resources: readonly { encoded: Uint8Array }[], pattern: RegExp): string[] {
  const text = JSON.stringify(resources.map((r) => decodeAny(r.encoded).resource));
  return [...new Set([...text.matchAll(pattern)].map((m) => m[1]))];
}

/**
 * Generates and encodes every type for every test proxy as the server does (through the encoded-resource cache
 * and the shape memo); routes, a gateway's secrets and gRPC endpoints by the names the listeners and clusters give.
 */
function generateAll(push: PushContext, slowest: Slowest, input: string): Map<string, number> {
  const counts = new Map<string, number>();
  const deps = {
    generators: GENERATORS,
    cache: new XdsCache({ enabled: true, maxEntries: 10_000, stats: false }),
    schema: SCHEMA,
    shapes: new ShapeMemo(),
  };
  for (const proxy of PROXIES) {
    const build = (typeUrl: string, names: string[] = []) => {
      const started = performance.now();
      const out = buildResources(deps, proxy, typeUrl, push, { names, full: true }) ?? [];
      const ms = performance.now() - started;
      if (ms > slowest.ms) Object.assign(slowest, { ms, what: `${typeUrl} for ${proxy.id}`, input });
      counts.set(`${proxy.id} ${typeUrl.split(".").at(-1)}`, out.length);
      return out;
    };
    const listeners = build(TYPE_URL.listener);
    const clusters = build(TYPE_URL.cluster);
    build(TYPE_URL.route, namesIn(listeners, /"route_config_name":"([^"]+)"/g));
    if (proxy.metadata.generator === "grpc") {
      build(TYPE_URL.endpoint, namesIn(clusters, /"service_name":"([^"]+)"/g));
    } else {
      build(TYPE_URL.endpoint);
    }
    if (proxy.type === "router") {
      // A sidecar's secrets come from its agent; a gateway's credentials from here.
      build(
        TYPE_URL.secret,
        namesIn(listeners, /"tls_certificate_sds_secret_configs":\[\{"name":"([^"]+)"/g)
          .filter((name) => name !== "default"),
      );
    }
  }
  return counts;
}

/** Fuzz runs and seed; GENERATORS_FUZZ_RUNS and GENERATORS_FUZZ_SEED hunt with more. */
const RUNS = Number(Deno.env.get("GENERATORS_FUZZ_RUNS") ?? 200);
const SEED = Number(Deno.env.get("GENERATORS_FUZZ_SEED") ?? 42);

Deno.test("No accepted mutation of the validation corpus or the test meshes makes an xDS generator throw", () => {
  const base = worldResources();
  const seeds = [...corpusDocuments(), ...base.map(documentOf)];
  // The refused corpus documents stay: one edit may make them valid, with the unusual values they hold.
  assert.ok(
    seeds.filter((doc) => parseResource(doc).resource !== undefined).length >= 35,
    "the valid corpus and the test meshes are accepted",
  );
  const slowest: Slowest = { ms: 0, what: "", input: "" };
  // Every proxy gets every type from the meshes as they are, so what the mutations change is generated.
  const counts = generateAll(pushWithSecrets(new World().apply(...base), SECRETS), slowest, "");
  assert.equal(counts.size, 17);
  for (const [what, count] of counts) assert.ok(count > 0, `${what}: nothing generated`);
  let generated = 0;
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          pick: fc.nat(),
          where: fc.option(fc.nat(), { freq: 2 }),
          edits: fc.array(edit, { minLength: 0, maxLength: 3 }),
        }),
        { minLength: 1, maxLength: 3 },
      ),
      (changes) => {
        const resources: Resource[] = [];
        const docs: unknown[] = [];
        for (const { pick, where, edits } of changes) {
          let doc: unknown = seeds[pick % seeds.length];
          if (where !== null) doc = relocated(doc, where);
          for (const e of edits) doc = applyEdit(doc, e);
          const text = JSON.stringify(doc);
          if (text === undefined) continue;
          // What the config store gets: the parsed result of a document without errors.
          const { resource } = parseResource(JSON.parse(text));
          if (resource === undefined) continue;
          resources.push(resource);
          docs.push(doc);
        }
        if (resources.length === 0) return;
        generated++;
        const input = JSON.stringify(docs);
        const world = new World().apply(...base, ...resources);
        const push = pushWithSecrets(world, SECRETS, { version: "fuzz" });
        try {
          generateAll(push, slowest, input);
        } catch (error) {
          throw new Error(`${error instanceof Error ? error.stack : error}\nfor ${input.slice(0, 2000)}`);
        }
      },
    ),
    { seed: SEED, numRuns: RUNS },
  );
  if (Deno.env.get("GENERATORS_FUZZ_RUNS") !== undefined) {
    console.log(
      `${generated} generations; slowest ${slowest.ms.toFixed(1)} ms: ${slowest.what}\n${
        slowest.input.slice(0, 3000)
      }`,
    );
  }
  assert.ok(generated >= RUNS / 4, `only ${generated} of ${RUNS} runs had an accepted document`);
});
