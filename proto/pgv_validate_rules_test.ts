import assert from "node:assert/strict";
import protobuf from "protobufjs";
import { encodeAny } from "./any_codec.ts";
import { type PgvViolation, validatePgv, validatePgvAny } from "./pgv_validate.ts";

// A schema of our own that uses every kind of rule the walker dispatches, parsed like Envoy's files are.
const SOURCE = `syntax = "proto3";
package t;
import "google/protobuf/any.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";
message Inner {
  string id = 1 [(validate.rules).string = {min_len: 1}];
}
message Off {
  option (validate.disabled) = true;
  string id = 1 [(validate.rules).string = {min_len: 1}];
}
message R {
  map<string, Inner> by_name = 1 [(validate.rules).map = {min_pairs: 1, max_pairs: 2, keys {string {prefix: "k"}}}];
  map<string, string> labels = 2 [(validate.rules).map = {values {string {max_len: 3}}}];
  repeated string tags = 3 [(validate.rules).repeated = {max_items: 3, unique: true, items {string {min_len: 1}}}];
  repeated Inner inners = 4;
  google.protobuf.UInt32Value weight = 5 [(validate.rules).uint32 = {gte: 1, lte: 128}];
  google.protobuf.StringValue label = 6 [(validate.rules).string = {min_len: 2}];
  Inner skipped = 7 [(validate.rules).message = {skip: true}];
  Off off = 8;
  google.protobuf.Any config = 9 [(validate.rules).any = {required: true, in: "type.googleapis.com/t.Inner"}];
  google.protobuf.Timestamp expires = 10 [(validate.rules).timestamp = {gt_now: true}];
  google.protobuf.Duration timeout = 11 [(validate.rules).duration = {required: true, lte {seconds: 60}}];
  optional uint32 port = 12 [(validate.rules).uint32 = {gte: 1}];
  oneof kind {
    string host = 13 [(validate.rules).string = {hostname: true}];
    string ip = 14 [(validate.rules).string = {ip: true}];
  }
  uint32 mode = 15 [(validate.rules).uint32 = {lte: 511}];
  repeated uint32 ports = 16 [(validate.rules).repeated = {items {uint32 {lte: 65535 gte: 1}}}];
}`;

function schema(): protobuf.Root {
  const root = new protobuf.Root();
  for (const file of ["any", "duration", "timestamp", "wrappers"]) {
    root.addJSON(protobuf.common.get(`google/protobuf/${file}.proto`)!.nested!);
  }
  protobuf.parse(SOURCE, root, { keepCase: true });
  root.resolveAll();
  return root;
}

const root = schema();
const NOW = new Date("2024-01-01T00:00:00Z");
const INNER_ANY = { "@type": "type.googleapis.com/t.Inner", id: "x" };
const VALID = {
  by_name: { k1: { id: "a" } },
  config: INNER_ANY,
  timeout: { seconds: 1 },
};

function check(object: Record<string, unknown>): string[] {
  return validatePgv("t.R", object, { root, now: NOW }).map((v: PgvViolation) => `${v.path}: ${v.message}`);
}

Deno.test("validatePgv accepts a message that meets every rule", () => {
  assert.deepEqual(check(VALID), []);
  assert.deepEqual(
    check({
      ...VALID,
      labels: { a: "abc" },
      tags: ["a", "b"],
      weight: { value: 128 },
      label: { value: "ab" },
      skipped: { id: "" },
      off: { id: "" },
      expires: { seconds: NOW.getTime() / 1000 + 1 },
      port: 1,
      ip: "::1",
      ports: [1, 65535],
    }),
    [],
  );
});

Deno.test("validatePgv checks map, repeated and wrapper rules", async (t) => {
  await t.step("maps: pair counts, keys, values, and message values recursively", () => {
    assert.deepEqual(check({ ...VALID, by_name: {} }), ["R.by_name: must have at least 1 entry (got 0)"]);
    assert.deepEqual(check({ ...VALID, by_name: { k1: { id: "a" }, x: { id: "" }, k3: { id: "c" } } }), [
      "R.by_name: must have at most 2 entries (got 3)",
      'R.by_name["x"]: key must start with "k" (got "x")',
      'R.by_name["x"].id: must be at least 1 character (got "")',
    ]);
    assert.deepEqual(check({ ...VALID, labels: { a: "abcd" } }), [
      'R.labels["a"]: must be at most 3 characters (got "abcd")',
    ]);
  });
  await t.step("repeated: item counts, uniqueness, item rules, and message items recursively", () => {
    assert.deepEqual(check({ ...VALID, tags: ["a", "", "a", "b"], inners: [{ id: "a" }, {}] }), [
      "R.tags: must have at most 3 items (got 4)",
      "R.tags[2]: must be unique: it repeats an earlier item",
      'R.tags[1]: must be at least 1 character (got "")',
      'R.inners[1].id: must be at least 1 character (got "")',
    ]);
    assert.deepEqual(check({ ...VALID, ports: [0, 80, 70000] }), [
      "R.ports[0]: must be in range [1, 65535] (got 0)",
      "R.ports[2]: must be in range [1, 65535] (got 70000)",
    ]);
  });
  await t.step("wrappers take the wrapped scalar's rules, only when set", () => {
    assert.deepEqual(check({ ...VALID, weight: { value: 0 }, label: {} }), [
      "R.weight: must be in range [1, 128] (got 0)",
      'R.label: must be at least 2 characters (got "")',
    ]);
  });
});

Deno.test("validatePgv applies presence rules as PGV does", async (t) => {
  await t.step("required message, Any and Duration fields", () => {
    assert.deepEqual(check({ by_name: { k: { id: "a" } } }), [
      "R.config: is required",
      "R.timeout: is required",
    ]);
  });
  await t.step("proto3 scalars are checked at their default, optional ones only when set", () => {
    assert.deepEqual(check({ ...VALID, mode: 512 }), ["R.mode: must be <= 511 (got 512)"]);
    assert.deepEqual(check({ ...VALID, port: 0 }), ["R.port: must be >= 1 (got 0)"]);
  });
  await t.step("oneof members only when set", () => {
    assert.deepEqual(check({ ...VALID, host: "not a host" }), [
      'R.host: must be a hostname (got "not a host")',
    ]);
    assert.deepEqual(check({ ...VALID, ip: "" }), ['R.ip: must be an IP address (got "")']);
  });
  await t.step("skip and disabled stop the descent", () => {
    assert.deepEqual(check({ ...VALID, skipped: {}, off: {} }), []);
  });
});

Deno.test("validatePgv checks Any, Duration and Timestamp rules", () => {
  assert.deepEqual(
    check({
      ...VALID,
      config: { "@type": "type.googleapis.com/t.Off", id: "" },
      timeout: { seconds: 61 },
      expires: { seconds: NOW.getTime() / 1000 },
    }),
    [
      'R.config: must have a type URL in ["type.googleapis.com/t.Inner"] (got "type.googleapis.com/t.Off")',
      "R.expires: must be after now (got 2024-01-01T00:00:00.000Z)",
      "R.timeout: must be <= 60s (got 61s)",
    ],
  );
  assert.deepEqual(check({ ...VALID, config: { ...INNER_ANY, id: "" } }), [
    'R.config(Inner).id: must be at least 1 character (got "")',
  ]);
});

Deno.test("validatePgvAny names the resource by its type", () => {
  const bytes = encodeAny("type.googleapis.com/t.R", { ...VALID, mode: 600 }, root);
  assert.deepEqual(validatePgvAny(bytes, { root, now: NOW }), [{
    path: "R.mode",
    message: "must be <= 511 (got 600)",
  }]);
});
