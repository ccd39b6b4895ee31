import assert from "node:assert/strict";
import { cat, dbl, len, str, vint } from "./_test_bytes.ts";
import { loadEnvoySchema } from "./envoy_schema.ts";
import { type JsonObject, jsonToStruct, jsonToValue, structToJson, valueToJson } from "./struct_json.ts";

const METADATA: JsonObject = {
  NAMESPACE: "default",
  LABELS: { app: "reviews", version: "v2" },
  INTERCEPTION_MODE: "REDIRECT",
  MESH_PROXY_VERSION: "1.9.0",
  SDS: true,
  CONCURRENCY: 2,
  EXCHANGE_KEYS: ["NAME", "NAMESPACE"],
  EMPTY: null,
};

// google/protobuf/struct.proto: Struct.fields = 1 (map<string, Value>: entry key = 1, value = 2);
// Value: null_value = 1, number_value = 2, string_value = 3, bool_value = 4, struct_value = 5, list_value = 6;
// ListValue.values = 1.
function entry(key: string, value: Uint8Array): Uint8Array {
  return len(1, str(1, key), len(2, value));
}

/** The Struct bytes of METADATA written by hand, as Envoy (C++) or go-control-plane would send them. */
const METADATA_BYTES = cat(
  entry("NAMESPACE", str(3, "default")),
  entry("LABELS", len(5, entry("app", str(3, "reviews")), entry("version", str(3, "v2")))),
  entry("INTERCEPTION_MODE", str(3, "REDIRECT")),
  entry("MESH_PROXY_VERSION", str(3, "1.9.0")),
  entry("SDS", vint(4, 1)),
  entry("CONCURRENCY", dbl(2, 2)),
  entry("EXCHANGE_KEYS", len(6, len(1, str(3, "NAME")), len(1, str(3, "NAMESPACE")))),
  entry("EMPTY", vint(1, 0)),
);

Deno.test("structToJson reads Struct bytes written by another implementation", () => {
  const Struct = loadEnvoySchema().lookupType("google.protobuf.Struct");
  assert.deepEqual(structToJson(Struct.decode(METADATA_BYTES)), METADATA);
});

Deno.test("jsonToStruct builds what protobufjs encodes to the standard Struct bytes", () => {
  const Struct = loadEnvoySchema().lookupType("google.protobuf.Struct");
  const bytes = Struct.encode(Struct.fromObject(jsonToStruct(METADATA))).finish();
  assert.deepEqual(structToJson(Struct.decode(bytes)), METADATA);
  // Map entries may come in any order, so compare by decoding the hand-written bytes the other way too.
  assert.equal(bytes.length, METADATA_BYTES.length);
});

Deno.test("protobufjs silently drops snake_case Value keys, which is why jsonToStruct exists", () => {
  const Struct = loadEnvoySchema().lookupType("google.protobuf.Struct");
  const snake = Struct.encode(Struct.fromObject({ fields: { NAMESPACE: { string_value: "default" } } }))
    .finish();
  assert.deepEqual(structToJson(Struct.decode(snake)), { NAMESPACE: null });
  const camel = Struct.encode(Struct.fromObject(jsonToStruct({ NAMESPACE: "default" }))).finish();
  assert.deepEqual(new Uint8Array(camel), entry("NAMESPACE", str(3, "default")));
});

Deno.test("jsonToValue maps each JSON kind to its Value field", async (t) => {
  await t.step("scalars", () => {
    assert.deepEqual(jsonToValue(null), { nullValue: 0 });
    assert.deepEqual(jsonToValue(true), { boolValue: true });
    assert.deepEqual(jsonToValue(1.5), { numberValue: 1.5 });
    assert.deepEqual(jsonToValue("x"), { stringValue: "x" });
  });
  await t.step("containers", () => {
    assert.deepEqual(jsonToValue([1, "a"]), {
      listValue: { values: [{ numberValue: 1 }, { stringValue: "a" }] },
    });
    assert.deepEqual(jsonToValue({ a: false }), { structValue: { fields: { a: { boolValue: false } } } });
  });
  await t.step("undefined object members are dropped as JSON.stringify drops them", () => {
    assert.deepEqual(jsonToStruct({ a: 1, b: undefined } as unknown as JsonObject), {
      fields: { a: { numberValue: 1 } },
    });
  });
  await t.step("non-JSON numbers and values are rejected with their path", () => {
    assert.throws(() => jsonToStruct({ a: { b: [Infinity] } }), {
      name: "TypeError",
      message: "Cannot put Infinity at struct.a.b[0] into a google.protobuf.Value: expected a finite number",
    });
    assert.throws(() => jsonToValue((() => 1) as unknown as JsonObject), /Cannot put a function at value/);
    assert.throws(() => jsonToStruct([] as unknown as JsonObject), /expected a JSON object/);
  });
});

Deno.test("valueToJson accepts object forms, including hand-written snake_case ones", () => {
  assert.equal(valueToJson({ stringValue: "a" }), "a");
  assert.equal(valueToJson({ string_value: "a" }), "a");
  assert.equal(valueToJson({ number_value: 0 }), 0);
  assert.deepEqual(valueToJson({ list_value: { values: [{ bool_value: false }] } }), [false]);
  assert.deepEqual(valueToJson({ struct_value: { fields: { k: { null_value: 0 } } } }), { k: null });
  assert.equal(valueToJson({}), null);
  assert.equal(valueToJson(undefined), null);
  assert.deepEqual(structToJson(undefined), {});
});

Deno.test("valueToJson ignores the defaults a decoded Value inherits for unset kinds", () => {
  const Value = loadEnvoySchema().lookupType("google.protobuf.Value");
  // number_value = 2 holding 0: the inherited stringValue default "" must not win.
  const decoded = Value.decode(dbl(2, 0));
  assert.equal(
    (decoded as unknown as { stringValue: string }).stringValue,
    "",
    "precondition: inherited default",
  );
  assert.equal(valueToJson(decoded), 0);
  assert.equal(valueToJson(Value.decode(vint(4, 0))), false);
  assert.equal(valueToJson(Value.decode(str(3, ""))), "");
});
