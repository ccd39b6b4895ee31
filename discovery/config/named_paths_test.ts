import assert from "node:assert/strict";
import { symlink } from "@mesh/shared/testing/symlink";
import { filesToReread, pathsNamedBy } from "./named_paths.ts";

Deno.test("pathsNamedBy names the paths of create, modify, rename and remove events, and nothing else", () => {
  const event = (kind: Deno.FsEvent["kind"], paths: string[], flag?: Deno.FsEventFlag): Deno.FsEvent => ({
    kind,
    paths,
    ...(flag === undefined ? {} : { flag }),
  });
  assert.deepEqual(pathsNamedBy(event("rename", ["/c/.tmp-1", "/c/a.yaml"])), ["/c/.tmp-1", "/c/a.yaml"]);
  assert.deepEqual(
    pathsNamedBy(event("modify", ["/c/x/../a.yaml"])),
    ["/c/a.yaml"],
    "made absolute and normal",
  );
  assert.equal(pathsNamedBy(event("modify", ["/c/a.yaml"], "rescan")), undefined, "the kernel lost events");
  assert.equal(pathsNamedBy(event("other", ["/c/a.yaml"])), undefined);
  assert.equal(pathsNamedBy(event("any", ["/c/a.yaml"])), undefined);
  assert.equal(pathsNamedBy(event("create", [])), undefined);
  assert.equal(pathsNamedBy(undefined), undefined, "the watched path itself changed");
});

Deno.test("filesToReread reads known and new config files alone and walks for anything else", async (t) => {
  const root = await Deno.makeTempDir({ prefix: "named_paths_" });
  const dir = `${root}/config`;
  try {
    await Deno.mkdir(`${dir}/shop`, { recursive: true });
    await Deno.mkdir(`${dir}/empty`);
    await Deno.mkdir(`${dir}/..2026_11_25`);
    for (const file of ["a.yaml", "shop/b.yaml", "shop/new.yaml", "shop/notes.txt", "..2026_11_25/c.yaml"]) {
      await Deno.writeTextFile(`${dir}/${file}`, "kind: VirtualService\n");
    }
    await Deno.mkdir(`${dir}/fresh`);
    await Deno.writeTextFile(`${dir}/fresh/d.yaml`, "");
    await symlink(`${dir}/..2026_11_25`, `${dir}/..data`);
    await Deno.writeTextFile(`${root}/outside.yaml`, "");
    // Known files as the walk spells them: through the directory as given, with a trailing slash here.
    const known = new Map([[`${dir}/a.yaml`, `${dir}/a.yaml`], [`${dir}/shop/b.yaml`, `${dir}/shop/b.yaml`]]);
    const reread = (...paths: string[]) => filesToReread(paths, known, `${dir}/`);

    await t.step(
      "a known file, and a new config file in a folder of known files, are read alone",
      async () => {
        assert.deepEqual(await reread(`${dir}/shop/b.yaml`, `${dir}/shop/new.yaml`), [
          `${dir}/shop/b.yaml`,
          `${dir}/shop/new.yaml`,
        ]);
        assert.deepEqual(await reread(`${dir}/shop/new.yaml`), [`${dir}/shop/new.yaml`]);
      },
    );

    await t.step("staged copies, backups and paths gone without a trace are skipped", async () => {
      assert.deepEqual(
        await reread(`${dir}/shop/notes.txt`, `${dir}/.tmp-1`, `${dir}/a.yaml~`, `${dir}/gone.yaml`),
        [],
      );
    });

    await t.step("anything a walk must decide makes the walk happen", async () => {
      const cases: [string, string][] = [
        [`${dir}/fresh/d.yaml`, "a config file in a folder never read"],
        [`${dir}/empty`, "a folder"],
        [`${dir}/shop`, "a folder of known files"],
        [`${dir}/..data`, "an orchestrator mount's data link"],
        [`${dir}/..2026_11_25/c.yaml`, "a file inside a hidden folder"],
        [`${root}/outside.yaml`, "a path outside the directory"],
        [dir, "the directory itself"],
      ];
      for (const [path, what] of cases) assert.equal(await reread(path), undefined, what);
      assert.equal(await reread(`${dir}/shop/b.yaml`, `${dir}/empty`), undefined, "one such path is enough");
    });

    await t.step("a known file removed or turned into a folder makes the walk happen", async () => {
      await Deno.remove(`${dir}/a.yaml`);
      assert.equal(await reread(`${dir}/a.yaml`), undefined, "removed");
      await Deno.mkdir(`${dir}/a.yaml`);
      assert.equal(await reread(`${dir}/a.yaml`), undefined, "now a folder");
    });

    await t.step("a folder that held known files, gone, makes the walk happen", async () => {
      await Deno.rename(`${dir}/shop`, `${root}/shop-moved`);
      assert.equal(await reread(`${dir}/shop`), undefined);
    });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
