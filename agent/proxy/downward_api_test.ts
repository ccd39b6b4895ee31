import assert from "node:assert/strict";
import { parseDownwardApi } from "./downward_api.ts";

Deno.test("parseDownwardApi reads labels and annotations as the orchestrator quotes them (Go %q)", () => {
  const text = [
    'app="ratings"',
    'version="v1"',
    'proxy.mesh.io/config="{\\"holdApplicationUntilProxyStarts\\": true}\\n"',
    'path="C:\\\\mesh\\\\"',
    'tab="a\\tb\\x41\\u00e9\\U0001F600\\101"',
    'plain="héllo=world"',
    "",
  ].join("\n");
  const { values, badLines } = parseDownwardApi(text);
  assert.deepEqual(values, {
    app: "ratings",
    version: "v1",
    "proxy.mesh.io/config": '{"holdApplicationUntilProxyStarts": true}\n',
    path: "C:\\mesh\\",
    tab: "a\tbAé😀A",
    plain: "héllo=world",
  });
  assert.deepEqual(badLines, []);
});

Deno.test('parseDownwardApi leaves out and reports each line that is not key="value"', () => {
  const text = [
    'good="yes"',
    "no equals sign",
    "unquoted=value",
    'open="no end',
    'bad-escape="\\q"',
    'inner="a"b"',
    'short-hex="\\x4"',
  ].join("\n");
  const { values, badLines } = parseDownwardApi(text);
  assert.deepEqual(values, { good: "yes" });
  assert.deepEqual(badLines, [2, 3, 4, 5, 6, 7]);
});
