import assert from "node:assert/strict";
import { InvalidNodeError, parseProxy } from "./proxy.ts";

const ID = "sidecar~10.0.0.1~reviews-v1-abc.bookinfo~bookinfo.svc.cluster.local";

function rejects(node: Parameters<typeof parseProxy>[0], pattern: RegExp): void {
  assert.throws(() => parseProxy(node), (e: unknown) => {
    assert.ok(e instanceof InvalidNodeError, `expected InvalidNodeError, got ${e}`);
    assert.match(e.message, pattern);
    return true;
  });
}

Deno.test("parseProxy reads a sidecar node id", async (t) => {
  await t.step("type, address, pod id, namespace and domain come from the four parts", () => {
    const proxy = parseProxy({ id: ID });
    assert.equal(proxy.type, "sidecar");
    assert.equal(proxy.id, "reviews-v1-abc.bookinfo");
    assert.equal(proxy.nodeId, ID);
    assert.deepEqual(proxy.ipAddresses, ["10.0.0.1"]);
    assert.equal(proxy.podName, "reviews-v1-abc");
    assert.equal(proxy.namespace, "bookinfo");
    assert.equal(proxy.dnsDomain, "bookinfo.svc.cluster.local");
    assert.deepEqual(proxy.metadata.labels, {});
    assert.deepEqual(proxy.metadata.instanceIps, []);
    assert.equal(proxy.locality, undefined);
  });

  await t.step("a router id with an IPv6 address is accepted", () => {
    const proxy = parseProxy({ id: "router~fd00::7~gw-1.mesh-system~mesh-system.svc.cluster.local" });
    assert.equal(proxy.type, "router");
    assert.deepEqual(proxy.ipAddresses, ["fd00::7"]);
    assert.equal(proxy.namespace, "mesh-system");
  });

  await t.step("the node's cluster field is kept as the service cluster", () => {
    assert.equal(parseProxy({ id: ID, cluster: "reviews.bookinfo" }).serviceCluster, "reviews.bookinfo");
  });

  await t.step("the result is deeply frozen", () => {
    const proxy = parseProxy({ id: ID, metadata: { LABELS: { app: "reviews" } } });
    assert.ok(Object.isFrozen(proxy));
    assert.ok(Object.isFrozen(proxy.metadata));
    assert.ok(Object.isFrozen(proxy.metadata.labels));
    assert.ok(Object.isFrozen(proxy.ipAddresses));
  });
});

Deno.test("parseProxy reads node metadata by Istio's key names", async (t) => {
  const metadata = {
    NAMESPACE: "reviews-ns",
    LABELS: { app: "reviews", version: "v1", replicas: 2, canary: true },
    CLUSTER_ID: "Kubernetes",
    INTERCEPTION_MODE: "TPROXY",
    GENERATOR: "grpc",
    SERVICE_ACCOUNT: "bookinfo-reviews",
    NETWORK: "net-1",
    MESH_VERSION: "1.9.0",
    POD_NAME: "reviews-v1-abc",
    INSTANCE_IPS: "10.0.0.1, 10.0.0.2,fd00::1",
    WORKLOAD_NAME: "reviews-v1",
    AUTO_REGISTER_GROUP: "reviews-vms",
    PROXY_CONFIG: { concurrency: 2 },
  };
  const proxy = parseProxy({ id: ID, metadata, locality: { region: "r1", zone: "z1", sub_zone: "s1" } });

  await t.step("each named key lands in its typed field", () => {
    assert.deepEqual({ ...proxy.metadata, raw: undefined }, {
      namespace: "reviews-ns",
      labels: { app: "reviews", version: "v1", replicas: "2", canary: "true" },
      clusterId: "Kubernetes",
      interceptionMode: "TPROXY",
      generator: "grpc",
      serviceAccount: "bookinfo-reviews",
      network: "net-1",
      meshVersion: "1.9.0",
      podName: "reviews-v1-abc",
      instanceIps: ["10.0.0.1", "10.0.0.2", "fd00::1"],
      workloadName: "reviews-v1",
      autoRegisterGroup: "reviews-vms",
      raw: undefined,
    });
  });

  await t.step("metadata NAMESPACE overrides the namespace in the id", () => {
    assert.equal(proxy.namespace, "reviews-ns");
  });

  await t.step("INSTANCE_IPS replace the id's address", () => {
    assert.deepEqual(proxy.ipAddresses, ["10.0.0.1", "10.0.0.2", "fd00::1"]);
  });

  await t.step("unnamed keys stay available in raw, copied", () => {
    assert.deepEqual(proxy.metadata.raw["PROXY_CONFIG"], { concurrency: 2 });
    metadata.PROXY_CONFIG.concurrency = 3;
    assert.deepEqual(proxy.metadata.raw["PROXY_CONFIG"], { concurrency: 2 });
  });

  await t.step("locality accepts sub_zone and subZone", () => {
    assert.deepEqual(proxy.locality, { region: "r1", zone: "z1", subZone: "s1" });
    assert.deepEqual(parseProxy({ id: ID, locality: { subZone: "s2" } }).locality, { subZone: "s2" });
    assert.equal(parseProxy({ id: ID, locality: {} }).locality, undefined);
  });

  await t.step("ISTIO_VERSION is accepted when MESH_VERSION is absent", () => {
    assert.equal(parseProxy({ id: ID, metadata: { ISTIO_VERSION: "1.9.1" } }).metadata.meshVersion, "1.9.1");
  });

  await t.step("empty strings count as absent", () => {
    const p = parseProxy({ id: ID, metadata: { NAMESPACE: "", INSTANCE_IPS: "" } });
    assert.equal(p.namespace, "bookinfo");
    assert.deepEqual(p.ipAddresses, ["10.0.0.1"]);
  });

  await t.step("a pod id without a namespace is accepted when metadata names one", () => {
    const p = parseProxy({ id: "sidecar~10.0.0.1~vm-1~ns.svc.cluster.local", metadata: { NAMESPACE: "ns" } });
    assert.equal(p.podName, "vm-1");
    assert.equal(p.namespace, "ns");
  });
});

Deno.test("parseProxy rejects malformed nodes with InvalidNodeError", async (t) => {
  await t.step("empty id", () => rejects({}, /^Node id is empty: expected "sidecar\|router~<ip>~/));
  await t.step(
    "three parts",
    () => rejects({ id: "sidecar~10.0.0.1~a.b" }, /has 3 "~"-separated parts: expected 4/),
  );
  await t.step("five parts", () => rejects({ id: `${ID}~x` }, /has 5 "~"-separated parts: expected 4/));
  await t.step("unknown type", () =>
    rejects(
      { id: "ingress~10.0.0.1~a.b~b.svc.cluster.local" },
      /has type "ingress": expected "sidecar" or "router"/,
    ));
  await t.step("bad address", () =>
    rejects(
      { id: "sidecar~10.0.0.300~a.b~b.svc.cluster.local" },
      /has address "10.0.0.300": expected an IPv4 or IPv6 address/,
    ));
  await t.step(
    "empty pod id",
    () =>
      rejects(
        { id: "sidecar~10.0.0.1~~b.svc.cluster.local" },
        /has an empty pod id: expected "<pod>.<namespace>"/,
      ),
  );
  await t.step(
    "empty pod name",
    () => rejects({ id: "sidecar~10.0.0.1~.b~b.svc.cluster.local" }, /pod id ".b" with an empty pod name/),
  );
  await t.step("empty domain", () => rejects({ id: "sidecar~10.0.0.1~a.b~" }, /has an empty DNS domain/));
  await t.step(
    "no namespace anywhere",
    () =>
      rejects(
        { id: "sidecar~10.0.0.1~a~b.svc.cluster.local" },
        /without a namespace and the metadata has no NAMESPACE/,
      ),
  );
  await t.step("bad INSTANCE_IPS entry", () =>
    rejects(
      { id: ID, metadata: { INSTANCE_IPS: "10.0.0.1,nope" } },
      /metadata INSTANCE_IPS has "nope": expected comma-separated IP addresses/,
    ));
  await t.step("unknown interception mode", () =>
    rejects(
      { id: ID, metadata: { INTERCEPTION_MODE: "MAGIC" } },
      /INTERCEPTION_MODE is "MAGIC": expected one of "REDIRECT", "TPROXY", "NONE"/,
    ));
  await t.step(
    "non-string scalar",
    () =>
      rejects({ id: ID, metadata: { NAMESPACE: 7 } }, /metadata NAMESPACE is number 7: expected a string/),
  );
  await t.step(
    "labels not a map",
    () =>
      rejects(
        { id: ID, metadata: { LABELS: ["a"] } },
        /metadata LABELS is a list: expected a map of strings/,
      ),
  );
  await t.step(
    "label value not a string",
    () =>
      rejects(
        { id: ID, metadata: { LABELS: { app: { x: 1 } } } },
        /metadata LABELS.app is a map: expected a string/,
      ),
  );
  await t.step("a PROXY_CONFIG tracing field listeners cannot encode", () =>
    rejects(
      { id: ID, metadata: { PROXY_CONFIG: { tracing: { maxPathTagLength: 1.5 } } } },
      /^Node ".*" metadata PROXY_CONFIG\.tracing\.maxPathTagLength is number 1\.5: expected an integer/,
    ));
});

Deno.test("parseProxy keeps the checked PROXY_CONFIG tracing in metadata.tracing", () => {
  const proxy = parseProxy({
    id: ID,
    metadata: { PROXY_CONFIG: { tracing: { sampling: 5, customTags: {} } } },
  });
  assert.deepEqual(proxy.metadata.tracing, { sampling: 5, customTags: {} });
  assert.equal(parseProxy({ id: ID }).metadata.tracing, undefined);
});
