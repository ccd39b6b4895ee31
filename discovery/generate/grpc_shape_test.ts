import assert from "node:assert/strict";
import { isCacheable } from "./generator.ts";
import type { Proxy } from "../model/proxy.ts";
import type { PushContext } from "../push/push_context.ts";
import { grpcGenerators } from "./grpc_generators.ts";
import { GREETER, greeterResources, grpcProxy, networking, World } from "./_test_world.ts";
import { namespaceViewCases, ordinaryMesh, world } from "../push/_test_support.ts";

/**
 * Generates every name for every proxy and asserts that proxies of equal shape got equal resources: what is
 * sent and what invalidates it (cache key ids may name the proxy's namespace and still agree).
 */
function assertEqualShapesGetEqualResources(
  generator: ReturnType<typeof grpcGenerators>[number],
  push: PushContext,
  proxies: readonly Proxy[],
  names: readonly string[],
): void {
  const byShape = new Map<string, string>();
  for (const proxy of proxies) {
    for (const name of names) {
      const request = { names: name === "" ? [] : [name], full: true };
      const shape = `${generator.shapeOf!(proxy, push, request)} ${name}`;
      const out = JSON.stringify(
        generator.generate(proxy, push, request).map((r) =>
          isCacheable(r) ? [r.name, r.build(), [...r.key.dependsOn].sort()] : [r.name, [...r.encoded]]
        ),
      );
      const seen = byShape.get(shape);
      if (seen === undefined) byShape.set(shape, out);
      else assert.equal(out, seen, `${generator.typeUrl}: proxies of shape ${shape} got different resources`);
    }
  }
}

Deno.test("Proxyless gRPC clients with equal shapes get equal resources", async (t) => {
  const world = new World().apply(
    ...greeterResources(),
    networking("ServiceEntry", "other", "elsewhere", {
      hosts: ["elsewhere.other.svc.cluster.local"],
      location: "MESH_INTERNAL",
      resolution: "STATIC",
      ports: [{ number: 80, name: "grpc", protocol: "GRPC" }],
      endpoints: [{ address: "10.3.0.1" }],
    }),
    networking("Sidecar", "example", "narrow", {
      workloadSelector: { labels: { scope: "narrow" } },
      egress: [{ hosts: ["./*"] }],
    }),
    networking("VirtualService", "example", "greeter", {
      hosts: ["greeter"],
      http: [
        {
          match: [{ sourceLabels: { track: "canary" } }],
          route: [{ destination: { host: "greeter", subset: "v2" } }],
        },
        { route: [{ destination: { host: "greeter", subset: "v1" } }] },
      ],
    }),
  );
  const push = world.push();
  const proxies = [
    grpcProxy("example"),
    grpcProxy("example", {}, "10.9.9.1"),
    grpcProxy("example", { track: "canary" }),
    grpcProxy("example", { track: "canary", other: "x" }),
    grpcProxy("example", { scope: "narrow" }),
    grpcProxy("other"),
    grpcProxy("third"),
    grpcProxy("fourth", { track: "canary" }),
    grpcProxy("fifth", { track: "canary" }),
  ];
  const names = [
    "",
    `${GREETER}:7070`,
    "greeter.example:7070",
    "greeter:7070",
    `outbound|7070|v1|${GREETER}`,
    "elsewhere.other.svc.cluster.local:80",
    "elsewhere:80",
  ];

  for (const generator of grpcGenerators()) {
    await t.step(`${generator.typeUrl.split(".").at(-1)}: equal shapes, equal resources`, () => {
      assertEqualShapesGetEqualResources(generator, push, proxies, names);
    });
  }

  const wildcard = { names: [], full: true };
  await t.step("labels matter to RDS only, and only through the Sidecar scope elsewhere", () => {
    const [cds, , lds, rds] = grpcGenerators();
    const plain = grpcProxy("example");
    const canary = grpcProxy("example", { track: "canary" });
    const narrow = grpcProxy("example", { scope: "narrow" });
    assert.equal(lds.shapeOf!(plain, push, wildcard), lds.shapeOf!(canary, push, wildcard));
    assert.equal(cds.shapeOf!(plain, push, wildcard), cds.shapeOf!(canary, push, wildcard));
    assert.notEqual(rds.shapeOf!(plain, push, wildcard), rds.shapeOf!(canary, push, wildcard));
    assert.notEqual(lds.shapeOf!(plain, push, wildcard), lds.shapeOf!(narrow, push, wildcard));
    assert.notEqual(lds.shapeOf!(plain, push, wildcard), lds.shapeOf!(grpcProxy("other"), push, wildcard));
  });

  await t.step("namespaces nothing singles out share a shape unless a short name needs the namespace", () => {
    const [cds, , lds] = grpcGenerators();
    const [other, third] = [grpcProxy("other"), grpcProxy("third")];
    assert.equal(lds.shapeOf!(other, push, wildcard), lds.shapeOf!(third, push, wildcard));
    assert.equal(cds.shapeOf!(other, push, wildcard), cds.shapeOf!(third, push, wildcard));
    const qualified = { names: ["greeter.example:7070"], full: true };
    assert.equal(lds.shapeOf!(other, push, qualified), lds.shapeOf!(third, push, qualified));
    const short = { names: ["greeter:7070"], full: true };
    assert.notEqual(lds.shapeOf!(other, push, short), lds.shapeOf!(third, push, short));
  });
});

Deno.test("Proxyless gRPC clients in namespaces that see a snapshot alike share resources, and only they", async (t) => {
  const namespaces = ["a", "b", "c", "unnamed"];
  const proxies = namespaces.flatMap((ns) => [grpcProxy(ns), grpcProxy(ns, { track: "canary" })]);
  const names = [
    "",
    ...["a", "b", "c"].map((ns) => `svc.${ns}.svc.cluster.local:80`),
    "svc.a:80",
    "svc:80",
    "private.b.example:80",
    "to-c.a.example:80",
    "other.a.svc.cluster.local:80",
  ];
  const cases = [{ what: "the ordinary mesh", resources: [], alone: [] }, ...namespaceViewCases()];
  for (const { what, resources, alone } of cases) {
    await t.step(what, () => {
      const w = world();
      w.apply(...ordinaryMesh(), ...resources);
      const push = w.push();
      for (const generator of grpcGenerators()) {
        assertEqualShapesGetEqualResources(generator, push, proxies, names);
      }
      // What sharing buys: every namespace not seen alone shares one wildcard shape.
      const [, , lds] = grpcGenerators();
      const wildcard = { names: [], full: true };
      const shapes = new Set(namespaces.map((ns) => lds.shapeOf!(grpcProxy(ns), push, wildcard)));
      assert.equal(shapes.size, alone.length + (alone.length < namespaces.length ? 1 : 0));
    });
  }
});
