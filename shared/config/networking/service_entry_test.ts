import assert from "node:assert/strict";
import { check } from "./_check.ts";
import { validateServiceEntry } from "./service_entry.ts";

const se = (spec: unknown) => check(validateServiceEntry, spec);
const httpPort = { number: 80, name: "http", protocol: "HTTP" };

Deno.test("ServiceEntry accepts valid service entries", async (t) => {
  await t.step("external hosts resolved by DNS", () => {
    const r = se({
      hosts: ["api.example.com", "www.example.com"],
      ports: [httpPort],
      resolution: "DNS",
      location: "MESH_EXTERNAL",
    });
    assert.deepEqual(r.messages, []);
  });

  await t.step("static endpoints with labels and named ports", () => {
    const r = se({
      hosts: ["db.internal"],
      addresses: ["10.1.2.3", "2001:db8::1"],
      ports: [{ number: 5432, name: "tcp-pg", protocol: "TCP", targetPort: 15432 }],
      resolution: "STATIC",
      location: "MESH_INTERNAL",
      endpoints: [{
        address: "10.0.0.1",
        ports: { "tcp-pg": 6432 },
        labels: { version: "v1" },
        network: "n1",
        weight: 2,
      }],
      exportTo: ["~"],
    });
    assert.deepEqual(r.messages, []);
  });

  await t.step("wildcard hosts without resolution, CIDR addresses, and a workload selector", () => {
    assert.deepEqual(
      se({ hosts: ["*.example.com"], ports: [httpPort], addresses: ["192.168.0.0/16"] }).messages,
      [],
    );
    const selected = se({
      hosts: ["vm.example.com"],
      ports: [httpPort],
      resolution: "STATIC",
      workloadSelector: { labels: { app: "vm" } },
    });
    assert.deepEqual(selected.messages, []);
  });

  await t.step("a unix domain socket endpoint with a single port", () => {
    const r = se({
      hosts: ["uds.local"],
      ports: [httpPort],
      resolution: "STATIC",
      endpoints: [{ address: "unix:///var/run/app.sock" }],
    });
    assert.deepEqual(r.messages, []);
  });
});

Deno.test("ServiceEntry rejects invalid service entries with the field path", async (t) => {
  await t.step("no hosts, the * host, and an unknown field", () => {
    assert.deepEqual(se({ ports: [httpPort], discovery: "DNS" }).errors, ["spec.discovery", "spec.hosts"]);
    assert.deepEqual(se({ hosts: ["*"], ports: [httpPort] }).errors, ["spec.hosts[0]"]);
  });

  await t.step("duplicate port names and numbers, invalid port name and protocol", () => {
    const r = se({
      hosts: ["a.com"],
      ports: [httpPort, { number: 80, name: "http", protocol: "HTTP" }, {
        number: 70000,
        name: "Bad_Name",
        protocol: "SMTP",
      }],
    });
    assert.deepEqual(r.errors, [
      "spec.ports[1].name",
      "spec.ports[1].number",
      "spec.ports[2].number",
      "spec.ports[2].protocol",
      "spec.ports[2].name",
    ]);
  });

  await t.step("endpoints with resolution NONE, and selector together with endpoints", () => {
    assert.deepEqual(
      se({ hosts: ["a.com"], ports: [httpPort], endpoints: [{ address: "1.1.1.1" }] }).errors,
      ["spec.endpoints"],
    );
    const both = se({
      hosts: ["a.com"],
      ports: [httpPort],
      resolution: "STATIC",
      workloadSelector: { labels: { app: "a" } },
      endpoints: [{ address: "1.1.1.1" }],
    });
    assert.deepEqual(both.errors, ["spec.workloadSelector"]);
  });

  await t.step("STATIC endpoints must be IPs, with ports the entry defines", () => {
    const r = se({
      hosts: ["a.com"],
      ports: [httpPort],
      resolution: "STATIC",
      endpoints: [{ address: "a.example.com" }, { address: "1.2.3.4", ports: { grpc: 9000 } }],
    });
    assert.deepEqual(r.errors, ["spec.endpoints[0].address", "spec.endpoints[1].ports.grpc"]);
  });

  await t.step("DNS resolution of wildcard hosts without endpoints, CIDR with DNS", () => {
    assert.deepEqual(se({ hosts: ["*.a.com"], ports: [httpPort], resolution: "DNS" }).errors, [
      "spec.hosts[0]",
    ]);
    assert.deepEqual(
      se({ hosts: ["a.com"], ports: [httpPort], resolution: "DNS", addresses: ["10.0.0.0/8"] }).errors,
      [
        "spec.addresses",
      ],
    );
  });

  await t.step("several hosts on a plain TCP port unless resolution is NONE", () => {
    const tcp = [{ number: 3306, name: "mysql", protocol: "TCP" }];
    assert.deepEqual(se({ hosts: ["a.com", "b.com"], ports: tcp, resolution: "DNS" }).errors, ["spec.hosts"]);
    assert.deepEqual(se({ hosts: ["a.com", "b.com"], ports: tcp }).errors, []);
  });

  await t.step("invalid addresses, exportTo and resolution", () => {
    const r = se({
      hosts: ["a.com"],
      ports: [httpPort],
      addresses: ["10.0.0.300"],
      exportTo: ["~", "*"],
      resolution: "ROUND",
    });
    assert.deepEqual(r.errors, ["spec.addresses[0]", "spec.resolution", "spec.exportTo", "spec.exportTo"]);
  });

  await t.step("unix endpoints with ports or more than one service port", () => {
    const r = se({
      hosts: ["a.local"],
      ports: [httpPort, { number: 81, name: "http2", protocol: "HTTP2" }],
      resolution: "STATIC",
      endpoints: [{ address: "unix:///tmp/a.sock", ports: { http: 80 } }],
    });
    assert.deepEqual(r.errors, ["spec.endpoints[0].ports", "spec.ports"]);
  });
});
