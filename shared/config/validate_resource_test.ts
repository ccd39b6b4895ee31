import assert from "node:assert/strict";
import { parseResource } from "./validate_resource.ts";
import { type KindInfo, KINDS } from "./kinds.ts";

const vs = {
  apiVersion: "networking.istio.io/v1alpha3",
  kind: "VirtualService",
  metadata: {
    name: "reviews",
    namespace: "bookinfo",
    labels: { app: "reviews" },
    annotations: { "mesh.io/owner": "team-a" },
  },
  spec: { hosts: ["reviews"], http: [{ route: [{ destination: { host: "reviews" } }] }] },
};

const paths = (doc: unknown) => parseResource(doc).report.errors.map((e) => e.path);

Deno.test("parseResource returns typed resources in the canonical group", async (t) => {
  await t.step("Istio's group is an alias of networking.mesh.io", () => {
    const { resource, report } = parseResource(vs);
    assert.deepEqual(report.errors, []);
    assert.deepEqual(resource?.gvk, {
      group: "networking.mesh.io",
      version: "v1alpha3",
      kind: "VirtualService",
    });
    assert.deepEqual(resource?.meta, {
      name: "reviews",
      namespace: "bookinfo",
      labels: { app: "reviews" },
      annotations: { "mesh.io/owner": "team-a" },
    });
    assert.equal(resource?.spec, vs.spec);
  });

  await t.step("the mesh groups themselves, and security kinds", () => {
    const { resource } = parseResource({ ...vs, apiVersion: "networking.mesh.io/v1beta1" });
    assert.equal(resource?.gvk.version, "v1beta1");
    const pa = parseResource({
      apiVersion: "security.istio.io/v1beta1",
      kind: "PeerAuthentication",
      metadata: { name: "default" },
    });
    assert.deepEqual(pa.report.errors, []);
    assert.equal(pa.resource?.gvk.group, "security.mesh.io");
  });

  await t.step("a missing namespace takes the default, or the caller's", () => {
    const doc = { ...vs, metadata: { name: "reviews" } };
    assert.equal(parseResource(doc).resource?.meta.namespace, "default");
    assert.equal(
      parseResource(doc, undefined, { defaultNamespace: "istio-config" }).resource?.meta.namespace,
      "istio-config",
    );
  });

  await t.step("server-set metadata and status are accepted", () => {
    const doc = {
      ...vs,
      metadata: {
        ...vs.metadata,
        uid: "1234",
        resourceVersion: "42",
        generation: 3,
        managedFields: [],
        creationTimestamp: "2021-02-09T00:00:00Z",
      },
      status: { conditions: [] },
    };
    const { resource, report } = parseResource(doc);
    assert.deepEqual(report.errors, []);
    assert.equal(resource?.meta.resourceVersion, "42");
    assert.equal(resource?.meta.generation, 3);
  });
});

Deno.test("parseResource rejects bad envelopes with the field path", async (t) => {
  await t.step("unknown top-level fields", () => {
    assert.deepEqual(paths({ ...vs, extra: 1 }), ["extra"]);
  });

  await t.step("apiVersion missing, malformed or in an unknown group", () => {
    assert.deepEqual(paths({ ...vs, apiVersion: undefined }), ["apiVersion"]);
    assert.deepEqual(paths({ ...vs, apiVersion: "v1alpha3" }), ["apiVersion"]);
    assert.deepEqual(paths({ ...vs, apiVersion: "apps/v1" }), ["apiVersion"]);
  });

  await t.step("kind unknown, or not in the group or version", () => {
    assert.deepEqual(paths({ ...vs, kind: "Deployment" }), ["kind"]);
    assert.deepEqual(paths({ ...vs, apiVersion: "security.istio.io/v1beta1" }), ["kind"]);
    assert.deepEqual(paths({ ...vs, apiVersion: "networking.istio.io/v1" }), ["apiVersion"]);
    const envoyFilter = {
      apiVersion: "networking.istio.io/v1beta1",
      kind: "EnvoyFilter",
      metadata: { name: "f" },
      spec: {},
    };
    assert.deepEqual(paths(envoyFilter), ["apiVersion"]);
    const group = {
      apiVersion: "networking.istio.io/v1beta1",
      kind: "WorkloadGroup",
      metadata: { name: "g" },
      spec: { template: {} },
    };
    assert.deepEqual(paths(group), ["apiVersion"]);
  });

  await t.step("metadata missing, names and namespaces that are not DNS names, bad labels", () => {
    assert.deepEqual(paths({ ...vs, metadata: undefined }), ["metadata"]);
    assert.deepEqual(paths({ ...vs, metadata: { name: "Reviews" } }), ["metadata.name"]);
    assert.deepEqual(paths({ ...vs, metadata: { name: "reviews", namespace: "Book_Info" } }), [
      "metadata.namespace",
    ]);
    assert.deepEqual(paths({ ...vs, metadata: { name: "reviews", labels: { app: "a b" } } }), [
      "metadata.labels.app",
    ]);
    assert.deepEqual(paths({ ...vs, metadata: { name: "reviews", nmespace: "x" } }), ["metadata.nmespace"]);
  });

  await t.step("spec errors come with spec paths; the kind's name rules apply", () => {
    assert.deepEqual(paths({ ...vs, spec: { hosts: ["reviews"] } }), ["spec"]);
    const gateway = {
      apiVersion: "networking.istio.io/v1beta1",
      kind: "Gateway",
      metadata: { name: "my.gateway" },
      spec: { servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["*"] }] },
    };
    assert.deepEqual(paths(gateway), ["metadata.name"]);
  });

  await t.step("a document that is not an object", () => {
    assert.deepEqual(paths("just text"), [""]);
    assert.deepEqual(paths(null), [""]);
  });
});

Deno.test("parseResource puts source lines on issues", async (t) => {
  await t.step("the document's line when nothing finer is known", () => {
    const { report } = parseResource({ ...vs, kind: "Nope" }, { file: "a.yaml", line: 12 });
    assert.deepEqual(report.errors.map((e) => e.line), [12]);
  });

  await t.step("the field's line from a resolver", () => {
    const lineOf = (path: string) => (path === "spec.http[0].route[0].weight" ? 20 : undefined);
    const doc = {
      ...vs,
      spec: { hosts: ["a"], http: [{ route: [{ destination: { host: "a" }, weight: 120 }] }] },
    };
    const { report } = parseResource(doc, { file: "a.yaml", line: 12 }, { lineOf });
    assert.deepEqual(report.errors.map((e) => [e.path, e.line]), [["spec.http[0].route[0].weight", 20]]);
  });
});

Deno.test("A Gateway whose port protocol is not a string is refused with the field, not thrown at the caller", () => {
  // parseProtocol called toLowerCase on whatever the document held: a list there threw out of parseResource.
  const { resource, report } = parseResource({
    apiVersion: "networking.mesh.io/v1beta1",
    kind: "Gateway",
    metadata: { name: "g", namespace: "ns" },
    spec: {
      selector: { app: "gw" },
      servers: [{ port: { number: 80, name: "http", protocol: ["x"] }, hosts: ["*"] }],
    },
  });
  assert.equal(resource, undefined);
  assert.deepEqual(report.errors, [
    { path: "spec.servers[0].port.protocol", message: "must be a string, got a list" },
    { path: "spec.servers[0].port.protocol", message: "protocol is required" },
  ]);
});

Deno.test("A validator that throws refuses its document alone, saying so, and never throws at the caller", () => {
  const info = KINDS.find((k) => k.kind === "Sidecar")! as { validate: KindInfo["validate"] };
  const validate = info.validate;
  info.validate = () => {
    throw new TypeError("x.toLowerCase is not a function");
  };
  try {
    const { resource, report } = parseResource({
      apiVersion: "networking.mesh.io/v1beta1",
      kind: "Sidecar",
      metadata: { name: "s", namespace: "ns" },
      spec: {},
    });
    assert.equal(resource, undefined);
    assert.deepEqual(report.errors, [{
      path: "spec",
      message: "could not be validated (TypeError: x.toLowerCase is not a function); the resource is refused",
    }]);
  } finally {
    info.validate = validate;
  }
});

Deno.test("parseResource gives a spec without its null fields, which are unset, and keeps EnvoyFilter patch values whole", () => {
  // `tcpKeepalive:` with nothing after it passed validation as unset and reached CDS as null, which threw.
  const rule = parseResource({
    apiVersion: "networking.istio.io/v1beta1",
    kind: "DestinationRule",
    metadata: { name: "db", namespace: "ns" },
    spec: {
      host: "db.example.com",
      exportTo: null,
      trafficPolicy: { connectionPool: { tcp: { tcpKeepalive: null, maxConnections: 3 } }, tls: null },
      subsets: [{ name: "v1", labels: { v: "1" }, trafficPolicy: null }],
    },
  });
  assert.deepEqual(rule.resource?.spec, {
    host: "db.example.com",
    trafficPolicy: { connectionPool: { tcp: { maxConnections: 3 } } },
    subsets: [{ name: "v1", labels: { v: "1" } }],
  });
  const value = { name: "envoy.filters.http.lua", typed_config: { "@type": "x", metadata: null } };
  const filter = parseResource({
    apiVersion: "networking.istio.io/v1alpha3",
    kind: "EnvoyFilter",
    metadata: { name: "f", namespace: "ns" },
    spec: {
      workloadSelector: null,
      configPatches: [{
        applyTo: "HTTP_FILTER",
        match: { context: "SIDECAR_INBOUND", listener: null },
        patch: { operation: "INSERT_BEFORE", value },
      }],
    },
  });
  assert.deepEqual(filter.resource?.spec, {
    configPatches: [{
      applyTo: "HTTP_FILTER",
      match: { context: "SIDECAR_INBOUND" },
      patch: { operation: "INSERT_BEFORE", value },
    }],
  });
});

Deno.test("An integer beyond its field's type in Istio's API is refused with the field, at the largest value accepted", () => {
  // Retry attempts of 2^32 passed validation and made RDS throw encoding Envoy's uint32 num_retries.
  const errors = (kind: string, spec: unknown) =>
    parseResource({
      apiVersion: "networking.istio.io/v1beta1",
      kind,
      metadata: { name: "x", namespace: "ns" },
      spec,
    }).report.errors.map((e) => `${e.path}: ${e.message}`);
  const retries = (attempts: number) =>
    errors("VirtualService", {
      hosts: ["a.example.com"],
      http: [{ route: [{ destination: { host: "a.example.com" } }], retries: { attempts } }],
    });
  assert.deepEqual(retries(2 ** 31 - 1), []);
  assert.deepEqual(retries(2 ** 32), [
    "spec.http[0].retries.attempts: attempts must be at most 2147483647, got 4294967296",
  ]);
  const entry = (weight: number) => errors("WorkloadEntry", { address: "10.0.0.1", weight });
  assert.deepEqual(entry(2 ** 32 - 1), []);
  assert.deepEqual(entry(2 ** 32), ["spec.weight: weight must be at most 4294967295, got 4294967296"]);
  const keepalive = (probes: number) =>
    errors("DestinationRule", {
      host: "a.example.com",
      trafficPolicy: { connectionPool: { tcp: { tcpKeepalive: { probes } } } },
    });
  assert.deepEqual(keepalive(2 ** 32 - 1), []);
  assert.deepEqual(keepalive(2 ** 32), [
    "spec.trafficPolicy.connectionPool.tcp.tcpKeepalive.probes: must be between 0 and 4294967295, got 4294967296",
  ]);
});
