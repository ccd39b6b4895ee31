import assert from "node:assert/strict";
import { matchConflict, mergeDelegateRoutes } from "./virtual_service_delegate.ts";

Deno.test("matchConflict accepts delegate matches inside the root's", async (t) => {
  await t.step("prefix inside prefix, exact inside prefix, equal exacts", () => {
    assert.equal(matchConflict({ uri: { prefix: "/a" } }, { uri: { prefix: "/a/b" } }), false);
    assert.equal(matchConflict({ uri: { prefix: "/a" } }, { uri: { exact: "/a/x" } }), false);
    assert.equal(matchConflict({ uri: { exact: "/a" } }, { uri: { exact: "/a" } }), false);
    assert.equal(
      matchConflict({}, { uri: { regex: "/.*" } }),
      false,
      "an unset root field constrains nothing",
    );
  });

  await t.step("wider, different or regex matches conflict", () => {
    assert.equal(matchConflict({ uri: { prefix: "/a/b" } }, { uri: { prefix: "/a" } }), true);
    assert.equal(matchConflict({ uri: { exact: "/a" } }, { uri: { prefix: "/a" } }), true);
    assert.equal(matchConflict({ uri: { regex: "/a" } }, { uri: { regex: "/a" } }), true);
    assert.equal(matchConflict({ headers: { x: { exact: "1" } } }, { headers: { x: { exact: "2" } } }), true);
    assert.equal(matchConflict({ port: 80 }, { port: 81 }), true);
    assert.equal(matchConflict({ ignoreUriCase: true }, {}), true);
    assert.equal(matchConflict({ sourceLabels: { a: "1" } }, { sourceLabels: { a: "2" } }), true);
    assert.equal(matchConflict({ gateways: ["ns/a"] }, { gateways: ["ns/b"] }), true);
    assert.equal(matchConflict({ sourceNamespace: "x" }, {}), true);
  });
});

Deno.test("mergeDelegateRoutes combines matches and inherits root policies", () => {
  const merged = mergeDelegateRoutes(
    {
      name: "root",
      match: [{ uri: { prefix: "/api" }, headers: { a: { exact: "1" } } }],
      delegate: { name: "d" },
      retries: { attempts: 3 },
    },
    [
      { name: "v1", match: [{ uri: { prefix: "/api/v1" }, headers: { b: { exact: "2" } } }], route: [] },
      { name: "bad", match: [{ uri: { prefix: "/web" } }], route: [] },
      { route: [], retries: { attempts: 1 } },
    ],
  );
  assert.deepEqual(merged, [
    {
      name: "root-v1",
      match: [{ uri: { prefix: "/api/v1" }, headers: { a: { exact: "1" }, b: { exact: "2" } } }],
      route: [],
      retries: { attempts: 3 },
    },
    {
      name: "root",
      match: [{ uri: { prefix: "/api" }, headers: { a: { exact: "1" } } }],
      route: [],
      retries: { attempts: 1 },
    },
  ]);
});
