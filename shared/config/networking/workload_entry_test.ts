import assert from "node:assert/strict";
import { check } from "./_check.ts";
import { validateWorkloadEntry } from "./workload_entry.ts";

const we = (spec: unknown) => check(validateWorkloadEntry, spec);

Deno.test("WorkloadEntry accepts IPs, DNS names and unix sockets", async (t) => {
  await t.step("an IPv4 address with ports, labels and identity", () => {
    const r = we({
      address: "1.2.3.4",
      ports: { http: 8080, "grpc-api": 9090 },
      labels: { app: "vm", version: "v1" },
      network: "vpc-1",
      locality: "us-east/zone1",
      weight: 10,
      serviceAccount: "vm-sa",
    });
    assert.deepEqual(r.messages, []);
  });

  await t.step("an IPv6 address, a DNS name, a unix socket", () => {
    assert.deepEqual(we({ address: "2001:db8::10" }).messages, []);
    assert.deepEqual(we({ address: "vm1.example.com" }).messages, []);
    assert.deepEqual(we({ address: "unix:///var/run/vm.sock" }).messages, []);
  });
});

Deno.test("WorkloadEntry rejects invalid entries with the field path", async (t) => {
  await t.step("an empty or missing address", () => {
    assert.deepEqual(we({ address: "" }).errors, ["spec.address"]);
    assert.deepEqual(we({ ports: { http: 80 } }).errors, ["spec.address"]);
  });

  await t.step("an address that is neither IP nor DNS name, a relative socket path", () => {
    assert.deepEqual(we({ address: "not an address" }).errors, ["spec.address"]);
    assert.deepEqual(we({ address: "unix://relative/path" }).errors, ["spec.address"]);
  });

  await t.step("bad port names and numbers, ports on a unix socket", () => {
    assert.deepEqual(we({ address: "1.2.3.4", ports: { Http_1: 80, http: 0 } }).errors, [
      "spec.ports.Http_1",
      "spec.ports.http",
    ]);
    assert.deepEqual(we({ address: "unix:///a.sock", ports: { http: 80 } }).errors, ["spec.ports"]);
  });

  await t.step("invalid labels, negative weight, unknown fields", () => {
    const r = we({ address: "1.2.3.4", labels: { app: "a b" }, weight: -1, ip: "1.2.3.4" });
    assert.deepEqual(r.errors, ["spec.ip", "spec.labels.app", "spec.weight"]);
  });
});
