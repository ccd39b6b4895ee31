import assert from "node:assert/strict";
import type { NameTable } from "@mesh/proto/name_table";
import { DNS_TYPE } from "./dns_message.ts";
import { LookupTable } from "./lookup_table.ts";

const TABLE: NameTable = {
  "db.example.com": { ips: ["10.20.0.1", "2001:db8::1"], registry: "External", shortname: "", namespace: "" },
  "web.shop.svc.cluster.local": {
    ips: ["10.96.0.7"],
    registry: "Orchestrator",
    shortname: "web",
    namespace: "shop",
  },
  "api.pay.svc.cluster.local": {
    ips: ["10.96.0.8"],
    registry: "Orchestrator",
    shortname: "api",
    namespace: "pay",
  },
  "bad.example.com": { ips: ["not-an-ip"], registry: "External", shortname: "", namespace: "" },
};
const SCOPE = {
  namespace: "shop",
  domain: "shop.svc.cluster.local",
  search: ["shop.svc.cluster.local", "svc.cluster.local", "cluster.local"],
};

const data = (records: readonly { data: unknown }[] | undefined) => records?.map((r) => r.data);

Deno.test("the lookup table answers A and AAAA for a host, and an empty list for a family it lacks", () => {
  const table = new LookupTable(TABLE, SCOPE);
  assert.deepEqual(data(table.lookup(DNS_TYPE.A, "db.example.com.")), ["10.20.0.1"]);
  assert.deepEqual(data(table.lookup(DNS_TYPE.AAAA, "db.example.com.")), ["2001:db8::1"]);
  assert.deepEqual(table.lookup(DNS_TYPE.AAAA, "web.shop.svc.cluster.local."), []);
  assert.equal(table.lookup(16, "db.example.com."), undefined, "other types go upstream");
  assert.equal(table.lookup(DNS_TYPE.A, "bad.example.com."), undefined);
  assert.equal(table.lookup(DNS_TYPE.A, "other.example.com."), undefined);
});

Deno.test("orchestrator hosts answer under their short forms; the bare name only in the workload's namespace", () => {
  const table = new LookupTable(TABLE, SCOPE);
  for (const name of ["web.", "web.shop.", "web.shop.svc."]) {
    assert.deepEqual(data(table.lookup(DNS_TYPE.A, name)), ["10.96.0.7"], name);
  }
  assert.deepEqual(data(table.lookup(DNS_TYPE.A, "api.pay.")), ["10.96.0.8"]);
  assert.equal(table.lookup(DNS_TYPE.A, "api."), undefined);
});

Deno.test("a name with the first search domain appended is a CNAME to the name", () => {
  const table = new LookupTable(TABLE, SCOPE);
  const answers = table.lookup(DNS_TYPE.A, "web.shop.svc.cluster.local.shop.svc.cluster.local.");
  assert.deepEqual(answers?.map((r) => [r.name, r.type, r.data]), [
    ["web.shop.svc.cluster.local.shop.svc.cluster.local.", DNS_TYPE.CNAME, "web.shop.svc.cluster.local."],
    ["web.shop.svc.cluster.local.", DNS_TYPE.A, "10.96.0.7"],
  ]);
  assert.deepEqual(
    data(table.lookup(DNS_TYPE.A, "db.example.com.shop.svc.cluster.local."))?.[1],
    "10.20.0.1",
  );
  // Only the first search domain, as Istio: the resolver tries it first.
  assert.equal(table.lookup(DNS_TYPE.A, "web.shop.svc.cluster.local.svc.cluster.local."), undefined);
});
