import assert from "node:assert/strict";
import { SelectorIndex } from "./selector_index.ts";

Deno.test("SelectorIndex names as candidates only the entries requiring one of a workload's labels", () => {
  const index = new SelectorIndex();
  for (let i = 0; i < 50; i++) index.put(`ns/pick-${i}`, "ns", { app: `app-${i}` });
  index.put("ns/two-labels", "ns", { app: "app-7", tier: "web" });
  index.put("ns/everything", "ns", {});
  index.put("other/pick-7", "other", { app: "app-7" });
  assert.deepEqual(
    [...index.candidates("ns", [{ app: "app-7", version: "v1" }])].sort(),
    ["ns/everything", "ns/pick-7", "ns/two-labels"],
  );
  assert.deepEqual(
    [...index.candidates("ns", [{ app: "app-3" }, { app: "app-4" }])].sort(),
    ["ns/everything", "ns/pick-3", "ns/pick-4"],
  );
  assert.deepEqual([...index.candidates("empty", [{ app: "app-7" }])], []);
});

Deno.test("SelectorIndex follows entries whose selector changes or that go away", () => {
  const index = new SelectorIndex();
  index.put("ns/a", "ns", { app: "x" });
  index.put("ns/a", "ns", { app: "y" });
  assert.deepEqual([...index.candidates("ns", [{ app: "x" }])], []);
  assert.deepEqual([...index.candidates("ns", [{ app: "y" }])], ["ns/a"]);
  index.delete("ns/a");
  assert.deepEqual([...index.candidates("ns", [{ app: "y" }])], []);
  index.delete("ns/unknown");
});
