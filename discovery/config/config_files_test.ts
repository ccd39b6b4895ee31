import { symlink } from "@mesh/shared/testing/symlink";
import assert from "node:assert/strict";
import { isConfigFileName, listConfigFiles } from "./config_files.ts";

Deno.test("listConfigFiles walks the tree for YAML and JSON files", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "config_files_test_" });
  try {
    for (
      const path of ["a.yaml", "b.yml", "c.json", "d.txt", ".hidden.yaml", "sub/e.YAML", "sub/deeper/f.yaml"]
    ) {
      await Deno.mkdir(`${dir}/${path}`.replace(/\/[^/]+$/, ""), { recursive: true });
      await Deno.writeTextFile(`${dir}/${path}`, "{}");
    }
    await Deno.mkdir(`${dir}/..2021_01_01/`, { recursive: true });
    await Deno.writeTextFile(`${dir}/..2021_01_01/g.yaml`, "{}");
    await symlink(`${dir}/..2021_01_01`, `${dir}/..data`);
    await symlink(`${dir}/..data/g.yaml`, `${dir}/g.yaml`);
    await symlink(`${dir}/missing.yaml`, `${dir}/dangling.yaml`);
    await symlink(dir, `${dir}/sub/loop`);

    await t.step("recursively, sorted, skipping hidden entries and following links once", async () => {
      const files = (await listConfigFiles(`${dir}/`)).map((f) => f.slice(dir.length + 1));
      assert.deepEqual(files, ["a.yaml", "b.yml", "c.json", "g.yaml", "sub/deeper/f.yaml", "sub/e.YAML"]);
    });

    await t.step("an unreadable root throws", async () => {
      await assert.rejects(() => listConfigFiles(`${dir}/nope`), Deno.errors.NotFound);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("isConfigFileName accepts .yaml, .yml and .json only, and no hidden files", () => {
  assert.deepEqual(
    ["a.yaml", "a.yml", "a.json", "a.JSON", "a.yaml~", ".a.yaml", "a.txt"].map(isConfigFileName),
    [true, true, true, true, false, false, false],
  );
});
