import assert from "node:assert/strict";
import type { Resource } from "@mesh/shared/config/resource";
import { FileConfigSource } from "./file_config_source.ts";
import { MemoryConfigStore } from "./memory_config_store.ts";
import { replaceFile, virtualService, waitFor } from "./_test_support.ts";

/** A store that records the name of every resource written to it, to see what a reload touched. */
class WriteRecordingStore extends MemoryConfigStore {
  readonly written: string[] = [];

  override apply(resource: Resource): Resource | undefined {
    this.written.push(resource.meta.name);
    return super.apply(resource);
  }
}

/** A config directory with three files, two in the root and one in a folder, and a started source over it. */
async function startSource(verifyMs: number) {
  const root = await Deno.makeTempDir({ prefix: "named_reload_" });
  const dir = `${root}/config`;
  await Deno.mkdir(`${dir}/shop`, { recursive: true });
  await Deno.writeTextFile(`${dir}/a.yaml`, virtualService("a", "a.example.com"));
  await Deno.writeTextFile(`${dir}/b.yaml`, virtualService("b", "b.example.com"));
  await Deno.writeTextFile(`${dir}/shop/c.yaml`, virtualService("c", "c.example.com"));
  const store = new WriteRecordingStore();
  // No settle wait: these tests replace files whole or read them after they were written.
  const source = new FileConfigSource({ dir, store, defaultNamespace: "default", verifyMs, settleMs: 0 });
  await source.start();
  const host = (name: string) => {
    const spec = store.get("VirtualService", "shop", name)?.spec as { hosts?: string[] } | undefined;
    return spec?.hosts?.[0];
  };
  return {
    root,
    dir,
    store,
    source,
    host,
    async [Symbol.asyncDispose]() {
      await source.stop();
      await Deno.remove(root, { recursive: true });
    },
  };
}

Deno.test("FileConfigSource reads alone the files the watcher names", async (t) => {
  // The check after a partial read is pushed out of the test's way; the last step asks for one.
  await using ctx = await startSource(60_000);
  const { dir, store, source, host } = ctx;
  const firstLoad = source.status().lastLoad;

  await t.step("a file replaced in place of a known one writes only that file's resources", async () => {
    store.written.length = 0;
    await replaceFile(`${dir}/b.yaml`, virtualService("b", "b2.example.com"));
    await waitFor(() => host("b") === "b2.example.com", "the new b");
    assert.deepEqual(store.written, ["b"]);
    assert.equal(source.status().lastLoad, firstLoad, "the tree was not read");
  });

  await t.step("a new file in a folder already read is read alone", async () => {
    store.written.length = 0;
    await replaceFile(`${dir}/shop/d.yaml`, virtualService("d", "d.example.com"));
    await waitFor(() => host("d") === "d.example.com", "the new file's resource");
    assert.deepEqual(store.written, ["d"]);
    assert.equal(source.status().lastLoad, firstLoad, "the tree was not read");
  });

  await t.step("a resource moved from one file to another is written once and never deleted", async () => {
    store.written.length = 0;
    const deleted: string[] = [];
    const stop = store.onEvent((e) => e.type === "delete" && deleted.push(e.resource.meta.name));
    // The document moves from b.yaml to a.yaml in one burst: each file names it in turn.
    await Promise.all([
      replaceFile(
        `${dir}/a.yaml`,
        virtualService("a", "a.example.com") + "---\n" + virtualService("b", "b3.x"),
      ),
      replaceFile(`${dir}/b.yaml`, "# moved to a.yaml\n"),
    ]);
    await waitFor(() => host("b") === "b3.x", "b as a.yaml now defines it");
    stop();
    assert.deepEqual(deleted, []);
    assert.equal(source.status().lastLoad, firstLoad, "the tree was not read");
  });

  await t.step("a removed file reads the whole tree, which withdraws its resources", async () => {
    await Deno.remove(`${dir}/shop/d.yaml`);
    await waitFor(() => host("d") === undefined, "the removed file's resource to go");
    assert.notEqual(source.status().lastLoad, firstLoad);
  });

  await t.step("a new folder reads the whole tree", async () => {
    const before = source.status().lastLoad;
    await Deno.mkdir(`${dir}/more`);
    await Deno.writeTextFile(`${dir}/more/e.yaml`, virtualService("e", "e.example.com"));
    await waitFor(() => host("e") === "e.example.com", "the resource in the new folder");
    assert.notEqual(source.status().lastLoad, before);
  });
});

Deno.test("FileConfigSource finds a change no watch event named by reading the tree after a partial read", async () => {
  await using ctx = await startSource(1500);
  const { root, dir, store, source, host } = ctx;
  // A hard link's other name, outside the tree: writing through it changes a.yaml without any event in the tree.
  await Deno.link(`${dir}/a.yaml`, `${root}/a-elsewhere.yaml`);
  const firstLoad = source.status().lastLoad;
  await Deno.writeTextFile(`${root}/a-elsewhere.yaml`, virtualService("a", "a2.example.com"));

  store.written.length = 0;
  await replaceFile(`${dir}/b.yaml`, virtualService("b", "b2.example.com"));
  await waitFor(() => host("b") === "b2.example.com", "the new b");
  assert.equal(host("a"), "a.example.com", "a.yaml was not read with b.yaml");
  assert.equal(source.status().lastLoad, firstLoad);

  await waitFor(
    () => host("a") === "a2.example.com",
    "the check after the partial read to find a.yaml's change",
  );
  assert.notEqual(source.status().lastLoad, firstLoad);
});

Deno.test("A whole-tree read writes to the store only what changed since this source wrote it", async (t) => {
  await using ctx = await startSource(60_000);
  const { dir, store, host } = ctx;
  /** Adds a file, then removes it: a removal always reads the whole tree. */
  const readWholeTree = async (name: string) => {
    await Deno.writeTextFile(`${dir}/${name}.yaml`, virtualService(name, `${name}.example.com`));
    await waitFor(() => host(name) !== undefined, `the resource of ${name}.yaml`);
    store.written.length = 0;
    await Deno.remove(`${dir}/${name}.yaml`);
    await waitFor(() => host(name) === undefined, `the whole-tree read after ${name}.yaml was removed`);
  };

  await t.step("resources of files left alone are not offered to the store again", async () => {
    await readWholeTree("x");
    assert.deepEqual(store.written, []);
    assert.equal(host("a"), "a.example.com");
  });

  await t.step("a resource changed in the store by another writer is written back", async () => {
    const current = store.get("VirtualService", "shop", "a")!;
    store.apply({ ...current, spec: { ...(current.spec as object), hosts: ["other.example.com"] } });
    assert.equal(host("a"), "other.example.com");
    await readWholeTree("y");
    assert.equal(host("a"), "a.example.com");
    assert.deepEqual(store.written, ["a"]);
  });
});
