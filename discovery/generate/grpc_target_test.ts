import assert from "node:assert/strict";
import { candidateHostnames, findService, resolveGrpcTarget, splitHostPort } from "./grpc_target.ts";
import { GREETER, greeterResources, grpcProxy, networking, World } from "./_test_world.ts";

Deno.test("splitHostPort splits authorities as gRPC targets write them", () => {
  assert.deepEqual(splitHostPort("a.b:7070"), { host: "a.b", port: 7070 });
  assert.deepEqual(splitHostPort("a.b"), { host: "a.b" });
  assert.deepEqual(splitHostPort("[2001:db8::1]:443"), { host: "2001:db8::1", port: 443 });
  assert.deepEqual(splitHostPort("[2001:db8::1]"), { host: "2001:db8::1" });
  assert.deepEqual(splitHostPort("2001:db8::1"), { host: "2001:db8::1" });
  for (const bad of ["", ":80", "a:", "a:0", "a:65536", "a:x", "[::1", "[::1]x"]) {
    assert.equal(splitHostPort(bad), undefined, bad);
  }
});

Deno.test("candidateHostnames expands short names from the client's namespace", () => {
  const proxy = grpcProxy("ns");
  assert.deepEqual(candidateHostnames("a", proxy), ["a", "a.ns.svc.cluster.local"]);
  assert.deepEqual(candidateHostnames("a.other", proxy), ["a.other", "a.other.svc.cluster.local"]);
  assert.deepEqual(candidateHostnames("a.other.svc", proxy), ["a.other.svc", "a.other.svc.cluster.local"]);
  assert.deepEqual(candidateHostnames("a.other.svc.cluster.local", proxy), ["a.other.svc.cluster.local"]);
});

Deno.test("findService matches hostnames, then wildcard hosts, then service addresses", () => {
  const world = new World().apply(
    ...greeterResources(),
    networking("ServiceEntry", "example", "vip", {
      hosts: ["vip.example.svc.cluster.local"],
      addresses: ["240.0.0.1"],
      location: "MESH_INTERNAL",
      resolution: "STATIC",
      ports: [{ number: 80, name: "grpc", protocol: "GRPC" }],
      endpoints: [{ address: "10.0.0.5" }],
    }),
    networking("ServiceEntry", "example", "wild", {
      hosts: ["*.example.com", "*.a.example.com"],
      location: "MESH_INTERNAL",
      resolution: "STATIC",
      ports: [{ number: 80, name: "grpc", protocol: "GRPC" }],
      endpoints: [{ address: "10.0.0.6" }],
    }),
  );
  const proxy = grpcProxy();
  const push = world.push();
  const memo = push.derived;
  const services = push.servicesVisibleTo(proxy);
  assert.equal(findService(memo, "greeter", proxy, services)?.hostname, GREETER);
  assert.equal(findService(memo, "240.0.0.1", proxy, services)?.hostname, "vip.example.svc.cluster.local");
  assert.equal(findService(memo, "x.a.example.com", proxy, services)?.hostname, "*.a.example.com");
  assert.equal(findService(memo, "x.example.com", proxy, services)?.hostname, "*.example.com");
  assert.equal(findService(memo, "example.com", proxy, services), undefined);
  assert.equal(
    resolveGrpcTarget(memo, "240.0.0.1:80", proxy, services)?.service.hostname,
    "vip.example.svc.cluster.local",
  );
  assert.equal(resolveGrpcTarget(memo, "240.0.0.1:81", proxy, services), undefined);
});
