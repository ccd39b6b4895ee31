import assert from "node:assert/strict";
import { MAX_EXPANDED_NODES, readRenderedYaml } from "./rendered_yaml.ts";

/** Anchors each standing for nine of the one before: `levels` lines for 9^(levels+1) leaves. */
function laughs(levels: number): string {
  const lines = ['x0: &a0 ["l","l","l","l","l","l","l","l","l"]'];
  for (let i = 1; i <= levels; i++) lines.push(`x${i}: &a${i} [${Array(9).fill(`*a${i - 1}`).join(",")}]`);
  return lines.join("\n");
}

Deno.test("readRenderedYaml reads YAML 1.1 booleans, and a few aliases, as the reference does", () => {
  assert.deepEqual(readRenderedYaml("a: yes\nb: off"), { a: true, b: false });
  const value = readRenderedYaml("base: &b {port: 80}\none: *b\ntwo: *b\n") as Record<string, unknown>;
  assert.deepEqual(value.two, { port: 80 });
  assert.ok(readRenderedYaml(laughs(3)), "9^4 leaves are within the bound");
});

Deno.test("readRenderedYaml refuses aliases that stand for more nodes than it reads", () => {
  assert.throws(
    () => readRenderedYaml(laughs(8)),
    {
      message: `excessive aliasing: the rendered YAML's 19 nodes stand for 490329055 once its aliases are ` +
        `followed; at most ${MAX_EXPANDED_NODES}, or ten times its own, are read`,
    },
  );
  // The bound is on both: a large document may alias a lot of itself.
  const big = Array.from({ length: 20_000 }, (_, i) => `k${i}: [1, 2, 3, 4]`).join("\n");
  assert.ok(
    readRenderedYaml(`${big}\nshared: &s [${"1,".repeat(50)}1]\nuses: [${Array(1000).fill("*s").join(",")}]`),
  );
});
