import assert from "node:assert/strict";
import fc from "fast-check";
import { placesOf, replacedAt } from "@mesh/shared/testing/json_places";
import { kubeconfigFor } from "@mesh/shared/testing/orch_api_server";
import { stringify } from "yaml";
import { load } from "js-yaml";
import { translateIngresses } from "./ingress_convert.ts";
import { shapeIngress } from "./ingress_shapes.ts";
import { parseRemoteKubeconfig } from "./remote_kubeconfig.ts";

/** `INGRESS_FUZZ_RUNS` and `INGRESS_FUZZ_SEED` hunt with more runs and other seeds. */
const RUNS = Number(Deno.env.get("INGRESS_FUZZ_RUNS") ?? 1_000);
const SEED = Number(Deno.env.get("INGRESS_FUZZ_SEED") ?? 20_260_502);

const INGRESS = {
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  metadata: { name: "shop", namespace: "shop", annotations: { "kubernetes.io/ingress.class": "mesh" } },
  spec: {
    ingressClassName: "mesh",
    tls: [{ hosts: ["shop.example"], secretName: "cert" }],
    rules: [{
      host: "shop.example",
      http: {
        paths: [
          { path: "/a", pathType: "Prefix", backend: { service: { name: "web", port: { number: 80 } } } },
          { path: "/b", pathType: "Exact", backend: { service: { name: "web", port: { name: "http" } } } },
          { path: "/c/*", backend: { serviceName: "web", servicePort: "http" } },
        ],
      },
    }],
    defaultBackend: { service: { name: "web", port: { number: 80 } } },
  },
};
const CONTEXT = {
  mesh: { ingressControllerMode: "DEFAULT", ingressClass: "mesh", ingressService: "mesh-ingressgateway" },
  classes: new Map([["mesh", "mesh.io/ingress-controller"]]),
  namedPort: (_: string, service: string, port: string) =>
    service === "web" && port === "http" ? 8080 : undefined,
  domain: "cluster.local",
  ingressNamespace: "mesh-system",
};

const replacement = fc.oneof(
  fc.anything({ maxDepth: 2 }),
  fc.constantFrom(null, {}, [], [null], 0, -1, 65536, 1.5, "", "80", "x", true, { a: 1 }, [{}]),
);

Deno.test("No Ingress with parts replaced by wrong types makes the translation throw or route to a bad port", () => {
  const good = translateIngresses([shapeIngress(INGRESS).object!], CONTEXT).resources;
  assert.equal(good.length, 2);
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.nat(), replacement), { minLength: 1, maxLength: 4 }), (edits) => {
      let ingress: unknown = INGRESS;
      for (const [place, value] of edits) {
        const places = placesOf(ingress);
        ingress = replacedAt(ingress, places[place % places.length], value);
      }
      const shaped = shapeIngress(ingress).object;
      if (shaped === undefined) return;
      const { resources } = translateIngresses([shaped, shapeIngress(INGRESS).object!], CONTEXT);
      for (const r of resources.filter((r) => r.kind === "VirtualService")) {
        for (const h of (r.spec.http as { route: { destination: { port: { number: unknown } } }[] }[])) {
          const port = h.route[0].destination.port.number;
          assert.ok(
            Number.isInteger(port) && (port as number) >= 1 && (port as number) <= 65535,
            String(port),
          );
        }
      }
    }),
    { numRuns: RUNS, seed: SEED },
  );
});

Deno.test("No kubeconfig with parts replaced makes parsing throw; what is taken names an http(s) server", () => {
  const base = load(kubeconfigFor("https://10.0.0.1:6443"));
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.nat(), replacement), { minLength: 1, maxLength: 4 }),
      fc.boolean(),
      (edits, raw) => {
        let doc: unknown = base;
        for (const [place, value] of edits) {
          const places = placesOf(doc);
          doc = replacedAt(doc, places[place % places.length], value);
        }
        const text = raw ? JSON.stringify(doc) ?? "" : stringify(doc ?? null);
        const parsed = parseRemoteKubeconfig(text);
        if (parsed.error !== undefined) return;
        assert.match(parsed.server, /^https?:/);
        assert.equal(parsed.kubeConfig.getCurrentCluster()?.server, parsed.server.replace(/\/$/, ""));
      },
    ),
    { numRuns: RUNS, seed: SEED },
  );
});
