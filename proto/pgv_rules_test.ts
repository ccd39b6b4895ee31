import assert from "node:assert/strict";
import protobuf from "protobufjs";
import { loadEnvoySchema } from "./envoy_schema.ts";
import { fieldRules, messageValidationDisabled, oneofRequired } from "./pgv_rules.ts";

// deno-lint-ignore no-explicit-any -- assertions read decoded trees by path
type Tree = Record<string, any>;

const SOURCE = `syntax = "proto3";
package t;
message M {
  option (validate.disabled) = true;
  string a = 1 [(validate.rules).string = {in: "x" in: "y" min_len: 1}];
  oneof o {
    option (validate.required) = true;
    string b = 2;
    string c = 3;
  }
  oneof p { string d = 5; }
  repeated string r = 4 [(validate.rules).repeated = {min_items: 1, items {string {min_len: 2}}}];
  uint32 n = 6 [(validate.rules).uint32 = {lte: 10}, (validate.rules).message.required = true];
}`;

Deno.test("fieldRules reads rules as protobufjs exposes them after parsing a .proto file", async (t) => {
  const M = protobuf.parse(SOURCE, { keepCase: true }).root.lookupType("t.M");
  await t.step(
    "precondition: parsedOptions nests values, options is flat and keeps only the last repeated value",
    () => {
      assert.deepEqual(M.fields.a.parsedOptions, [{
        "(validate.rules)": { string: { in: ["x", "y"], min_len: 1 } },
      }]);
      assert.deepEqual(M.fields.a.options, {
        "(validate.rules).string.in": "y",
        "(validate.rules).string.min_len": 1,
      });
    },
  );
  await t.step("nested rules with every repeated value", () => {
    assert.deepEqual(fieldRules(M.fields.a), { string: { in: ["x", "y"], min_len: 1 } });
    assert.deepEqual(fieldRules(M.fields.r), {
      repeated: { min_items: 1, items: { string: { min_len: 2 } } },
    });
  });
  await t.step("several option statements on one field are merged", () => {
    assert.deepEqual(fieldRules(M.fields.n), { uint32: { lte: 10 }, message: { required: true } });
  });
  await t.step("fields without rules", () => {
    assert.equal(fieldRules(M.fields.b), undefined);
  });
  await t.step("oneof and message options", () => {
    assert.equal(oneofRequired(M.oneofs.o), true);
    assert.equal(oneofRequired(M.oneofs.p), false);
    assert.equal(messageValidationDisabled(M), true);
  });
});

Deno.test("fieldRules falls back to the flat options of a schema loaded from JSON", () => {
  const parsed = protobuf.parse(SOURCE, { keepCase: true }).root;
  const M = protobuf.Root.fromJSON(parsed.toJSON()).lookupType("t.M");
  assert.equal(M.fields.r.parsedOptions, null, "precondition: JSON carries no parsedOptions");
  assert.deepEqual(fieldRules(M.fields.r), { repeated: { min_items: 1, items: { string: { min_len: 2 } } } });
  // The flat form has lost "x" already; what is left is still read.
  assert.deepEqual(fieldRules(M.fields.a), { string: { in: "y", min_len: 1 } });
  assert.equal(oneofRequired(M.oneofs.o), true);
  assert.equal(messageValidationDisabled(M), true);
});

Deno.test("fieldRules reads the nested object form under the plain option name", () => {
  const field = new protobuf.Field("f", 1, "string", undefined, undefined, {
    "(validate.rules)": { string: { min_len: 3 } },
  });
  assert.deepEqual(fieldRules(field), { string: { min_len: 3 } });
});

Deno.test("fieldRules reads the rules of Envoy's own schema", async (t) => {
  const root = loadEnvoySchema();
  const fields = (name: string) => root.lookupType(name).fields;
  await t.step("scalars", () => {
    assert.deepEqual(fieldRules(fields("envoy.config.core.v3.SocketAddress").port_value), {
      uint32: { lte: 65535 },
    });
    assert.deepEqual(fieldRules(fields("envoy.config.cluster.v3.Cluster").name), { string: { min_len: 1 } });
  });
  await t.step("durations with an empty bound mean zero", () => {
    assert.deepEqual(fieldRules(fields("envoy.config.cluster.v3.Cluster").connect_timeout), {
      duration: { gt: {} },
    });
  });
  await t.step("repeated string lists", () => {
    const flags = fieldRules(fields("envoy.config.accesslog.v3.ResponseFlagFilter").flags) as Tree;
    assert.ok(flags.repeated.items.string.in.length > 20);
    assert.ok(flags.repeated.items.string.in.includes("UH"));
  });
  await t.step("oneofs", () => {
    const RouteMatch = root.lookupType("envoy.config.route.v3.RouteMatch");
    assert.equal(oneofRequired(RouteMatch.oneofs.path_specifier), true);
    const Cluster = root.lookupType("envoy.config.cluster.v3.Cluster");
    assert.equal(oneofRequired(Cluster.oneofs.cluster_discovery_type), false);
  });
});
