import assert from "node:assert/strict";
import fc from "fast-check";
import { placesOf, replacedAt } from "@mesh/shared/testing/json_places";
import { OrchApiServer } from "@mesh/shared/testing/orch_api_server";
import { waitFor } from "../config/_test_support.ts";
import { endpoints, HOST, node, pod, service, withRegistry } from "./_orch_registry_support.ts";
import {
  endpointsFromOrch,
  networkOf,
  nodeLocality,
  podWorkloadSpec,
  serviceFromOrch,
} from "./orch_convert.ts";
import { endpointsFromSlices } from "./endpoint_slices.ts";
import {
  shapeEndpoints,
  shapeEndpointSlice,
  shapeMetaOnly,
  shapePod,
  shapeService,
} from "./orch_object_shapes.ts";
import { podChangesEndpoints } from "./orch_changes.ts";
import { tlsSecretOf } from "./orch_secret_store.ts";
import type { OrchNode, OrchPod } from "./orch_objects.ts";

/** `ORCH_SHAPES_FUZZ_RUNS` and `ORCH_SHAPES_FUZZ_SEED` hunt with more runs and other seeds. */
const RUNS = Number(Deno.env.get("ORCH_SHAPES_FUZZ_RUNS") ?? 1_500);
const SEED = Number(Deno.env.get("ORCH_SHAPES_FUZZ_SEED") ?? 20_260_501);
const CTX = { domain: "cluster.local", clusterId: "c1", defaultExportTo: ["*"], edsForHeadless: false };

function slice(): Record<string, unknown> {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: { name: "ratings-a", namespace: "shop", labels: { "kubernetes.io/service-name": "ratings" } },
    addressType: "IPv4",
    endpoints: [{
      addresses: ["10.1.0.1"],
      conditions: { ready: true },
      nodeName: "node-a",
      targetRef: { kind: "Pod", name: "ratings-1", namespace: "shop" },
    }],
    ports: [{ name: "http", port: 9080, protocol: "TCP" }],
  };
}

/** Realistic objects of every kind read, each with the parts the conversions read set. */
function corpus(): Record<string, unknown>[] {
  const svc = service([{ name: "http", port: 8080 }, { name: "grpc-x", port: 9090 }]);
  svc.status = { loadBalancer: { ingress: [{ ip: "1.2.3.4" }, { hostname: "lb.example" }] } };
  (svc.spec as Record<string, unknown>).externalIPs = ["5.6.7.8"];
  const p = pod("ratings-1", "10.1.0.1", { "topology.mesh.io/network": "n1" });
  (p.status as Record<string, unknown>).conditions = [{ type: "Ready", status: "True" }];
  return [
    svc,
    endpoints([["ratings-1", "10.1.0.1"]], [["ratings-2", "10.1.0.2"]]),
    slice(),
    p,
    node(),
    {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "shop", labels: { "topology.istio.io/network": "n" } },
    },
    {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "s", namespace: "shop" },
      data: { "tls.crt": "YQ==" },
    },
  ];
}

/** What replaces a part: anything, or the values a broken API server is likeliest to send. */
const replacement = fc.oneof(
  fc.anything({ maxDepth: 2 }),
  fc.constantFrom(null, {}, [], [null], 0, -1, 65536, 1.5, "", "x", true, { port: 80 }, [{ port: 80 }]),
  fc.constant(Array.from({ length: 10_000 }, (_, i) => ({ name: `p${i % 3}`, port: i % 70_000 }))),
  fc.constant(Array.from({ length: 10_000 }, (_, i) => ({ ip: `10.0.${i >> 8}.${i & 255}` }))),
);

/** Every conversion the registry runs, over the shaped objects; throws what any of them throws. */
function convertAll(objects: unknown[]): void {
  const [svc, eps, sl, p, n, ns, secret] = objects;
  const pods = new Map<string, OrchPod>();
  const podShape = shapePod(p).object;
  if (podShape) pods.set(`${podShape.metadata.namespace ?? "default"}/${podShape.metadata.name}`, podShape);
  const nodeShape: OrchNode | undefined = shapeMetaOnly(n).object;
  const nsShape = shapeMetaOnly(ns).object;
  const lookups = [
    (namespace: string, name: string) => pods.get(`${namespace}/${name}`),
    (name: string) => name === nodeShape?.metadata.name ? nodeShape : undefined,
    CTX,
    () => nsShape,
  ] as const;
  const service = shapeService(svc).object;
  if (service) {
    const model = serviceFromOrch(service, CTX);
    for (const port of model.ports) assert.ok(Number.isInteger(port.port) && typeof port.name === "string");
    assert.ok(model.exportTo.every((e) => typeof e === "string"));
  }
  const converted = [];
  const endpointsShape = shapeEndpoints(eps).object;
  if (endpointsShape) converted.push(endpointsFromOrch(endpointsShape, ...lookups));
  const sliceShape = shapeEndpointSlice(sl).object;
  if (sliceShape) {
    converted.push(endpointsFromOrch(endpointsFromSlices("shop", "ratings", [sliceShape]), ...lookups));
  }
  for (const { endpoints } of converted) {
    for (const e of endpoints) {
      assert.ok(typeof e.address === "string" && typeof e.serviceAccount === "string", JSON.stringify(e));
      assert.ok(Number.isInteger(e.endpointPort) && typeof e.network === "string");
    }
  }
  if (podShape) {
    podWorkloadSpec(podShape, lookups[1]);
    podChangesEndpoints(podShape, podShape);
    networkOf(podShape.metadata.labels ?? {}, nsShape);
  }
  nodeLocality(nodeShape);
  tlsSecretOf(secret as Parameters<typeof tlsSecretOf>[0]);
}

Deno.test("No object of a read kind, with parts replaced by wrong types or huge lists, makes a conversion throw", () => {
  const base = corpus();
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.nat(), fc.nat(), replacement), { minLength: 1, maxLength: 4 }),
      (edits) => {
        const objects: unknown[] = [...base];
        for (const [which, place, value] of edits) {
          const i = which % objects.length;
          const places = placesOf(objects[i]);
          objects[i] = replacedAt(objects[i], places[place % places.length], value);
        }
        convertAll(objects);
      },
    ),
    { numRuns: RUNS, seed: SEED },
  );
});

Deno.test("The registry syncs with the good objects present whatever malformed objects sit beside them", async () => {
  const kinds = corpus().slice(0, 5);
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.tuple(fc.nat(), fc.nat(), replacement), { minLength: 1, maxLength: 4 }),
      async (edits) => {
        const api = OrchApiServer.start();
        try {
          api.apply(node());
          api.apply(service());
          api.apply(pod("ratings-1", "10.1.0.1"));
          api.apply(endpoints([["ratings-1", "10.1.0.1"]]));
          for (const [n, [which, place, value]] of edits.entries()) {
            const base = structuredClone(kinds[which % kinds.length]) as Record<string, unknown>;
            (base.metadata as Record<string, unknown>).name = `fuzzed-${n}`;
            // The test server routes objects by kind and keys them by namespace and name; the registry's
            // refusal of objects without them is the unit tests'.
            const places = placesOf(base).filter((p) =>
              p.length > 0 && p[0] !== "apiVersion" && p[0] !== "kind" &&
              !(p[0] === "metadata" && (p.length === 1 || p[1] === "name" || p[1] === "namespace"))
            );
            const at = places[place % places.length];
            api.apply(replacedAt(base, at, value) as Parameters<typeof api.apply>[0]);
          }
          await withRegistry(api, async (r) => {
            await waitFor(() => r.registry.hasSynced(), "the first sync", 5_000);
            assert.equal(r.registry.instances(HOST).map((i) => i.endpoint.address).join(), "10.1.0.1");
          });
        } finally {
          await api.close();
        }
      },
    ),
    { numRuns: Number(Deno.env.get("ORCH_SHAPES_FUZZ_REGISTRY_RUNS") ?? 12), seed: SEED },
  );
});
