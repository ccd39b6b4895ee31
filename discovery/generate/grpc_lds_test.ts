import assert from "node:assert/strict";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { grpcLdsGenerator } from "./grpc_lds.ts";
import { GREETER, greeterResources, grpcProxy, networking, run, World } from "./_test_world.ts";

function world(): World {
  return new World().apply(
    ...greeterResources(),
    networking("ServiceEntry", "example", "multi", {
      hosts: ["multi.example.svc.cluster.local"],
      location: "MESH_INTERNAL",
      resolution: "STATIC",
      ports: [{ number: 80, name: "http", protocol: "HTTP" }, {
        number: 9090,
        name: "grpc",
        protocol: "GRPC",
      }],
      endpoints: [{ address: "10.0.1.1" }],
    }),
    networking("ServiceEntry", "example", "private", {
      hosts: ["private.example.svc.cluster.local"],
      location: "MESH_INTERNAL",
      resolution: "STATIC",
      exportTo: ["."],
      ports: [{ number: 7070, name: "grpc", protocol: "GRPC" }],
      endpoints: [{ address: "10.0.2.1" }],
    }),
    networking("ServiceEntry", "example", "passthrough", {
      hosts: ["passthrough.example.com"],
      resolution: "NONE",
      ports: [{ number: 443, name: "tls", protocol: "TLS" }],
    }),
  );
}

Deno.test("gRPC LDS answers the listener names a client asks for", async (t) => {
  const push = world().push();
  const proxy = grpcProxy("example");

  await t.step(
    "an FQDN target gets an API listener named as asked, with RDS over ADS and the router last",
    () => {
      const out = run(grpcLdsGenerator, proxy, push, { names: [`${GREETER}:7070`] });
      assert.deepEqual(out.names, [`${GREETER}:7070`]);
      const listener = out.byName.get(`${GREETER}:7070`)!;
      const hcm = (listener.api_listener as { api_listener: Record<string, unknown> }).api_listener;
      assert.equal(hcm["@type"], TYPE_URL.httpConnectionManager);
      assert.deepEqual(hcm.rds, {
        config_source: { ads: {}, resource_api_version: "V3" },
        route_config_name: `${GREETER}:7070`,
      });
      const filters = hcm.http_filters as { name: string; typed_config: { "@type": string } }[];
      assert.equal(filters.at(-1)!.name, "envoy.filters.http.router");
      assert.equal(filters.at(-1)!.typed_config["@type"], TYPE_URL.router);
      assert.equal(filters.filter((f) => f.typed_config["@type"] === TYPE_URL.router).length, 1);
    },
  );

  await t.step("short names resolve from the client's namespace and keep the name asked for", () => {
    const names = ["greeter:7070", "greeter.example:7070", "greeter.example.svc:7070"];
    assert.deepEqual(run(grpcLdsGenerator, proxy, push, { names }).names, names);
    const elsewhere = grpcProxy("other");
    assert.deepEqual(run(grpcLdsGenerator, elsewhere, push, { names }).names, names.slice(1));
  });

  await t.step("a name without a port means the only port of a single-port service", () => {
    assert.deepEqual(run(grpcLdsGenerator, proxy, push, { names: [GREETER] }).names, [GREETER]);
    assert.deepEqual(
      run(grpcLdsGenerator, proxy, push, { names: ["multi.example.svc.cluster.local"] }).names,
      [],
    );
  });

  await t.step("unknown hosts, unknown ports and malformed names are not answered", () => {
    const names = [
      `${GREETER}:7071`,
      "nothing.example.svc.cluster.local:7070",
      `${GREETER}:notaport`,
      ":7070",
    ];
    assert.deepEqual(run(grpcLdsGenerator, proxy, push, { names }).names, []);
  });

  await t.step("a wildcard request gets every port of every service the client can see", () => {
    assert.deepEqual(run(grpcLdsGenerator, proxy, push).names.sort(), [
      `${GREETER}:7070`,
      "multi.example.svc.cluster.local:80",
      "multi.example.svc.cluster.local:9090",
      "private.example.svc.cluster.local:7070",
    ]);
  });

  await t.step(
    "services not exported to the client's namespace and passthrough services are left out",
    () => {
      const elsewhere = grpcProxy("other");
      const names = run(grpcLdsGenerator, elsewhere, push).names;
      assert.ok(!names.some((n) => n.startsWith("private.")), names.join(","));
      assert.ok(!names.some((n) => n.startsWith("passthrough.")), names.join(","));
      assert.deepEqual(
        run(grpcLdsGenerator, elsewhere, push, { names: ["private.example.svc.cluster.local:7070"] }).names,
        [],
      );
    },
  );
});

Deno.test("gRPC LDS keys a listener by its name alone, so clients of every namespace share it", () => {
  const push = world().push();
  const name = `${GREETER}:7070`;
  const a = run(grpcLdsGenerator, grpcProxy("example"), push, { names: [name] }).cacheable.get(name)!;
  const b = run(grpcLdsGenerator, grpcProxy("other", { app: "x" }), push, { names: [name] }).cacheable.get(
    name,
  )!;
  assert.equal(a.key.id, b.key.id);
  assert.deepEqual(a.key.dependsOn, ["ServiceEntry/example/greeter.example.svc.cluster.local"]);
  const short = run(grpcLdsGenerator, grpcProxy("example"), push, { names: ["greeter:7070"] });
  assert.notEqual(short.cacheable.get("greeter:7070")!.key.id, a.key.id);
});
