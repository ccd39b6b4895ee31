import assert from "node:assert/strict";
import { type ApiObject, OrchApiServer } from "@mesh/shared/testing/orch_api_server";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { waitFor } from "../config/_test_support.ts";
import { MemoryConfigStore } from "../config/memory_config_store.ts";
import { loadOrchConfig } from "./orch_client.ts";
import { RateLimiter } from "./rate_limiter.ts";
import { IngressConfigSource } from "./ingress_source.ts";

type Obj = Record<string, unknown>;

/** An Ingress of the mesh's class in `shop` named `name`, with `spec`. */
function ingress(name: string, spec: Obj): ApiObject {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { name, namespace: "shop", annotations: { "kubernetes.io/ingress.class": "mesh" } },
    spec,
  };
}

/** A rule for `host` routing `path` to `backend`. */
const rule = (host: string, ...paths: Obj[]) => ({ host, http: { paths } });
const toWeb = (path: string, port: unknown = { number: 8080 }) => ({
  path,
  pathType: "Exact",
  backend: { service: { name: "web", port } },
});

/** The URIs the VirtualService of `host` routes, in order. */
function routedUris(store: MemoryConfigStore, host: string): string[] {
  const vs = store.list("VirtualService").find((r) => (r.spec as { hosts: string[] }).hosts[0] === host);
  return ((vs?.spec as { http?: { match?: { uri: { exact: string } }[] }[] })?.http ?? [])
    .map((h) => h.match?.[0].uri.exact ?? "");
}

/** A started Ingress source over `api`, stopped and cleaned up after `fn`. */
async function withSource(
  api: OrchApiServer,
  fn: (
    world: { source: IngressConfigSource; store: MemoryConfigStore; log: RecordingLogger },
  ) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "mesh_ingress_source_" });
  await Deno.writeTextFile(`${dir}/kubeconfig`, api.kubeconfig());
  const store = new MemoryConfigStore();
  const log = new RecordingLogger();
  const source = new IngressConfigSource({
    kubeConfig: loadOrchConfig({ orchConfig: `${dir}/kubeconfig`, serviceHost: "" }),
    limiter: new RateLimiter(1000, 100),
    store,
    log,
    retryMs: 50,
    context: () => ({
      mesh: { ingressControllerMode: "STRICT", ingressClass: "mesh", ingressService: "mesh-ingressgateway" },
      namedPort: () => undefined,
      domain: "cluster.local",
      ingressNamespace: "mesh-system",
    }),
  });
  try {
    source.start();
    await fn({ source, store, log });
  } finally {
    await source.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("An Ingress whose rules are a map neither stops the list nor the sync; the other Ingresses are translated", async () => {
  // The typed client's list threw "data is not iterable" on it: no Ingress was ever listed and the server
  // never became ready.
  const api = OrchApiServer.start();
  try {
    api.apply(ingress("good", { rules: [rule("a.example", toWeb("/a"))] }));
    api.apply(ingress("mapped", { rules: { "b.example": { http: { paths: [toWeb("/b")] } } } }));
    await withSource(api, async ({ source, store, log }) => {
      await waitFor(() => source.synced, "the Ingresses listed");
      assert.deepEqual(routedUris(store, "a.example"), ["/a"]);
      assert.deepEqual(routedUris(store, "b.example"), []);
      const warned = log.matching("warn", "without the fields of the wrong shape");
      assert.equal(warned.length, 1);
      assert.equal(warned[0].fields?.object, "shop/mapped");
      assert.match(String(warned[0].fields?.problems), /^spec\.rules: expected a list, got an object/);
    });
  } finally {
    await api.close();
  }
});

Deno.test("An Ingress with null entries, a path without backend and a port number as a string keeps its valid paths", async () => {
  // `rules: [null]` threw out of the first translation, which runs from a timer: the process ended.
  const api = OrchApiServer.start();
  try {
    api.apply(ingress("good", { rules: [rule("a.example", toWeb("/a"))] }));
    api.apply(ingress("holes", {
      tls: [null, { hosts: "b.example", secretName: "b-cert" }],
      rules: [
        null,
        rule(
          "b.example",
          null as unknown as Obj,
          { path: "/none" },
          toWeb("/text", { number: "8080" }),
          toWeb("/b"),
        ),
        { host: 7, http: { paths: [toWeb("/any")] } },
      ],
    }));
    await withSource(api, async ({ source, store, log }) => {
      await waitFor(() => source.synced, "the Ingresses listed");
      assert.deepEqual(routedUris(store, "a.example"), ["/a"]);
      assert.deepEqual(routedUris(store, "b.example"), ["/b"]);
      const problems = String(
        log.matching("warn", "without the fields of the wrong shape")[0]?.fields?.problems,
      );
      for (
        const expected of [
          "spec.tls[0]: expected an object, got null",
          "spec.tls[1].hosts: expected a list, got the string",
          "spec.rules[0]: expected an object, got null",
          "spec.rules[1].http.paths[0]: expected an object, got null",
          'spec.rules[1].http.paths[2].backend.service.port.number: expected a port number from 1 to 65535, got the string "8080"',
          "spec.rules[2].host: expected a string, got number 7",
        ]
      ) assert.ok(problems.includes(expected), `${expected} in ${problems}`);
      const skipped = source.rejected().flatMap((r) => r.errors).join("\n");
      assert.match(skipped, /shop\/holes: path "\/none" of host "b.example": no backend service/);
      assert.match(skipped, /shop\/holes: path "\/text" of host "b.example": service "web" has no port ""/);
    });
  } finally {
    await api.close();
  }
});

Deno.test("An IngressClass whose controller is not a string hands no Ingress to the mesh, and the rest are listed", async () => {
  const api = OrchApiServer.start();
  try {
    api.apply({
      apiVersion: "networking.k8s.io/v1",
      kind: "IngressClass",
      metadata: { name: "odd" },
      spec: { controller: { name: "mesh.io/ingress-controller" } },
    });
    api.apply({
      ...ingress("classed", { ingressClassName: "odd", rules: [rule("c.example", toWeb("/c"))] }),
      metadata: { name: "classed", namespace: "shop" },
    });
    api.apply(ingress("good", { rules: [rule("a.example", toWeb("/a"))] }));
    await withSource(api, async ({ source, store, log }) => {
      await waitFor(() => source.synced, "both kinds listed");
      assert.deepEqual(routedUris(store, "a.example"), ["/a"]);
      assert.deepEqual(routedUris(store, "c.example"), []);
      const warned = log.matching("warn", "without the fields of the wrong shape");
      assert.equal(warned[0]?.fields?.kind, "IngressClass");
      assert.match(
        String(warned[0]?.fields?.problems),
        /^spec\.controller: expected a string, got an object/,
      );
    });
  } finally {
    await api.close();
  }
});
