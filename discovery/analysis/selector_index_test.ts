import assert from "node:assert/strict";
import { SelectorIndex } from "./selector_index.ts";

Deno.test("SelectorIndex finds the items whose selector selects the labels, empty selectors included, in order", () => {
  const items: { name: string; selector: Record<string, string> }[] = [
    { name: "all", selector: {} },
    { name: "web", selector: { app: "web" } },
    { name: "web-v1", selector: { app: "web", version: "v1" } },
    { name: "db", selector: { app: "db" } },
    { name: "v1", selector: { version: "v1" } },
  ];
  const index = new SelectorIndex(items, (i) => i.selector);
  assert.deepEqual(index.matching({ app: "web", version: "v1" }).map((i) => i.name), [
    "all",
    "web",
    "web-v1",
    "v1",
  ]);
  assert.deepEqual(index.matching({ app: "web", version: "v2" }).map((i) => i.name), ["all", "web"]);
  assert.deepEqual(index.matching({}).map((i) => i.name), ["all"]);
});
