import assert from "node:assert/strict";
import {
  decodeNameTable,
  decodeNameTableAny,
  encodeNameTable,
  encodeNameTableAny,
  ISTIO_NAME_TABLE_TYPE_URL,
  NAME_TABLE_TYPE_URL,
  type NameTable,
} from "./name_table.ts";

const TABLE: NameTable = {
  "db.example.com": { ips: ["10.0.0.1", "2001:db8::1"], registry: "External", shortname: "", namespace: "" },
  "web.shop.svc.cluster.local": {
    ips: ["10.96.0.7"],
    registry: "Orchestrator",
    shortname: "web",
    namespace: "shop",
  },
};

Deno.test("a name table reads back as written, alone and in an Any of either type URL", () => {
  assert.deepEqual(decodeNameTable(encodeNameTable(TABLE)), TABLE);
  assert.deepEqual(decodeNameTableAny(encodeNameTableAny(NAME_TABLE_TYPE_URL, TABLE)), TABLE);
  assert.deepEqual(decodeNameTableAny(encodeNameTableAny(ISTIO_NAME_TABLE_TYPE_URL, TABLE)), TABLE);
});

Deno.test("an Any of another type, or bytes that are no name table, are a TypeError", () => {
  assert.throws(() => decodeNameTableAny(encodeNameTableAny("type.googleapis.com/x.Y", TABLE)), TypeError);
  assert.throws(() => decodeNameTable(Uint8Array.of(0x0a, 0xff)), TypeError);
});
