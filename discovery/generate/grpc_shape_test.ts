import assert from "node:assert/strict";
import { isCacheable } from "./generator.ts";
import { grpcGenerators } from "./grpc_generators.ts";
import { GREETER, greeterResources, grpcProxy, networking, World } from "./_test_world.ts";

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
  ];
  const names = [
    "",
    `${GREETER}:7070`,
    `outbound|7070|v1|${GREETER}`,
    "elsewhere.other.svc.cluster.local:80",
  ];

  for (const generator of grpcGenerators()) {
    await t.step(`${generator.typeUrl.split(".").at(-1)}: equal shapes, equal resources`, () => {
      const byShape = new Map<string, string>();
      for (const proxy of proxies) {
        for (const name of names) {
          const request = { names: name === "" ? [] : [name], full: true };
          const shape = `${generator.shapeOf!(proxy, push)} ${name}`;
          const out = JSON.stringify(
            generator.generate(proxy, push, request).map((r) => [r.name, isCacheable(r) ? r.key.id : ""]),
          );
          const seen = byShape.get(shape);
          if (seen === undefined) byShape.set(shape, out);
          else assert.equal(out, seen, `proxies of shape ${shape} got different resources`);
        }
      }
    });
  }

  await t.step("labels matter to RDS only, and only through the Sidecar scope elsewhere", () => {
    const [cds, , lds, rds] = grpcGenerators();
    const plain = grpcProxy("example");
    const canary = grpcProxy("example", { track: "canary" });
    const narrow = grpcProxy("example", { scope: "narrow" });
    assert.equal(lds.shapeOf!(plain, push), lds.shapeOf!(canary, push));
    assert.equal(cds.shapeOf!(plain, push), cds.shapeOf!(canary, push));
    assert.notEqual(rds.shapeOf!(plain, push), rds.shapeOf!(canary, push));
    assert.notEqual(lds.shapeOf!(plain, push), lds.shapeOf!(narrow, push));
    assert.notEqual(lds.shapeOf!(plain, push), lds.shapeOf!(grpcProxy("other"), push));
  });
});
