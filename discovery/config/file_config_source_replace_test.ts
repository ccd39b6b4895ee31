import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { symlink } from "@mesh/shared/testing/symlink";
import { needs, tool } from "@mesh/shared/testing/system_tools";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import { type ConfigFs, denoConfigFs } from "./config_fs.ts";
import { FileConfigSource } from "./file_config_source.ts";
import { MemoryConfigStore } from "./memory_config_store.ts";
import { RecordingLogger, replaceFile, startTestSource, waitFor } from "./_test_support.ts";

function serviceEntry(name: string): string {
  return `apiVersion: networking.mesh.io/v1beta1
kind: ServiceEntry
metadata: {name: ${name}, namespace: shop}
spec:
  hosts: [${name}.shop.svc.cluster.local]
  location: MESH_INTERNAL
  resolution: STATIC
  ports: [{number: 9080, name: http, protocol: HTTP}]
`;
}

/** Writes `names` as one ServiceEntry file each into `dir`. */
async function populate(dir: string, names: readonly string[]): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  for (const name of names) await Deno.writeTextFile(`${dir}/${name}.yaml`, serviceEntry(name));
}

async function gaugeValue(metrics: Metrics, name: string): Promise<number | undefined> {
  const { values } = await metrics.gauge(name).get();
  return values.find((v) => v.labels.source === "configDir")?.value;
}

/** A started source over `dir` with short periods, and the names of the ServiceEntries it serves. */
function startSource(dir: string) {
  return startTestSource(dir, "ServiceEntry", { settleMs: 150 });
}

Deno.test("FileConfigSource follows its directory when it is replaced", async (t) => {
  const root = await Deno.makeTempDir({ prefix: "file_config_source_replace_" });
  const dir = `${root}/config`;
  await populate(dir, ["a", "b"]);
  const { source, logger, metrics, names } = await startSource(dir);
  try {
    await t.step(
      "a populated copy renamed over the directory is served, and so are later edits",
      async () => {
        await populate(`${root}/next`, ["a", "b", "c"]);
        await Deno.rename(dir, `${root}/old`);
        await Deno.rename(`${root}/next`, dir);
        await waitFor(() => names() === "a,b,c", "the renamed-in copy");
        await Deno.writeTextFile(`${dir}/d.yaml`, serviceEntry("d"));
        await waitFor(() => names() === "a,b,c,d", "an edit in the renamed-in directory");
        await Deno.remove(`${root}/old`, { recursive: true });
      },
    );

    await t.step("removed: the last config stays, the source is lost and says so", async () => {
      await Deno.remove(dir, { recursive: true });
      await waitFor(() => source.status().state === "lost", "the source to be lost");
      assert.equal(names(), "a,b,c,d");
      assert.equal(await gaugeValue(metrics, "discovery_config_source_lost"), 1);
      assert.equal(logger.matching("warn", "is gone").length, 1);
    });

    await t.step("recreated and filled again: the new content is served and the source watched", async () => {
      await Deno.mkdir(dir);
      await Deno.writeTextFile(`${dir}/e.yaml`, serviceEntry("e"));
      await waitFor(() => names() === "e", "the recreated directory's content");
      assert.equal(source.status().state, "watching");
      assert.equal(await gaugeValue(metrics, "discovery_config_source_lost"), 0);
      await Deno.writeTextFile(`${dir}/f.yaml`, serviceEntry("f"));
      await waitFor(() => names() === "e,f", "a file copied into the recreated directory");
    });

    await t.step("emptied: the last config stays, with a warning", async () => {
      // `rm -rf` above may have been seen passing through an empty folder too.
      const warned = logger.matching("warn", "has no config file").length;
      await Deno.remove(`${dir}/e.yaml`);
      await Deno.remove(`${dir}/f.yaml`);
      await waitFor(() => source.status().heldEmpty, "the empty directory to be held");
      assert.equal(names(), "e,f");
      assert.equal(logger.matching("warn", "has no config file").length, warned + 1);
    });
  } finally {
    await source.stop();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("FileConfigSource serves an orchestrator volume whose ..data link is swapped", async () => {
  const root = await Deno.makeTempDir({ prefix: "file_config_source_volume_" });
  await populate(`${root}/..2024_01`, ["a"]);
  await symlink("..2024_01", `${root}/..data`);
  await symlink("..data/a.yaml", `${root}/a.yaml`);
  const { source, names } = await startSource(root);
  try {
    assert.equal(names(), "a");
    await populate(`${root}/..2024_02`, ["b"]);
    await symlink("..2024_02", `${root}/..data_tmp`);
    await Deno.rename(`${root}/..data_tmp`, `${root}/..data`);
    await symlink("..data/b.yaml", `${root}/b.yaml`);
    await Deno.remove(`${root}/a.yaml`);
    await Deno.remove(`${root}/..2024_01`, { recursive: true });
    await waitFor(() => names() === "b", "the swapped-in data");
  } finally {
    await source.stop();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("FileConfigSource loads a file only once it has stopped changing", async () => {
  const dir = await Deno.makeTempDir({ prefix: "file_config_source_settle_" });
  await populate(dir, ["a"]);
  let now = Date.now();
  const store = new MemoryConfigStore();
  const source = new FileConfigSource({
    dir,
    store,
    defaultNamespace: "default",
    debounceMs: 5,
    checkMs: 60_000,
    settleMs: 60_000,
    wallClock: () => now,
  });
  await source.start();
  const names = () => store.list("ServiceEntry").map((r) => r.meta.name).sort().join(",");
  try {
    // Half of a two-document file, written in place: valid YAML with one resource fewer than the whole.
    await Deno.writeTextFile(`${dir}/a.yaml`, `${serviceEntry("b")}`);
    await source.reload();
    assert.equal(names(), "a", "a file modified within the settle period keeps its previous version");
    assert.deepEqual(source.status().settling, [`${dir}/a.yaml`]);
    // The write's events are noted (and trigger a reload) before the clock moves on.
    const reloads = source.reloads;
    await waitFor(() => source.reloads > reloads, "the reload the write's events start");
    now += 120_000;
    await source.reload();
    assert.equal(names(), "b");
    assert.deepEqual(source.status().settling, []);
  } finally {
    await source.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("FileConfigSource reads again a file rewritten with the same size right after it was read", async () => {
  const dir = await Deno.makeTempDir({ prefix: "file_config_source_racy_" });
  await populate(dir, ["a0"]);
  const store = new MemoryConfigStore();
  // No settle period: only the stamps decide whether a file is read again.
  const source = new FileConfigSource({
    dir,
    store,
    defaultNamespace: "default",
    checkMs: 60_000,
    settleMs: 0,
  });
  await source.start();
  const names = () => store.list("ServiceEntry").map((r) => r.meta.name).join(",");
  try {
    // Same length every time, within the file system's timestamp tick of the previous read: the stamp alone
    // (identity, size, times) cannot tell these versions apart.
    for (let i = 1; i < 20; i++) {
      const name = `${i % 2 === 0 ? "a" : "b"}${i % 10}`;
      await Deno.writeTextFile(`${dir}/a0.yaml`, serviceEntry(name));
      await source.reload();
      assert.equal(names(), name, `rewrite ${i}`);
    }
  } finally {
    await source.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("FileConfigSource judges a file's stamp by its wall clock, not the runtime's", async () => {
  const dir = await Deno.makeTempDir({ prefix: "file_config_source_stamp_clock_" });
  await populate(dir, ["a"]);
  // Every file reports one change time long past; the source's clock reads just after it, so to the source
  // each file changed too recently for its stamp to be trusted, and is read on every reload.
  const changedAt = new Date("2001-02-03T04:05:06Z");
  let reads = 0;
  const fs: ConfigFs = {
    ...denoConfigFs,
    stat: async (path) => ({ ...await denoConfigFs.stat(path), mtime: changedAt, ctime: changedAt }),
    readTextFile: (path) => {
      reads++;
      return denoConfigFs.readTextFile(path);
    },
  };
  const source = new FileConfigSource({
    dir,
    store: new MemoryConfigStore(),
    defaultNamespace: "default",
    checkMs: 60_000,
    settleMs: 0,
    wallClock: () => changedAt.getTime() + 1,
    fs,
  });
  await source.start();
  try {
    const before = reads;
    await source.reload();
    assert.equal(reads, before + 1, "a stamp taken within its file's racy window is not trusted");
  } finally {
    await source.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("FileConfigSource loads a file renamed into place at once: it arrived whole", async () => {
  const dir = await Deno.makeTempDir({ prefix: "file_config_source_rename_" });
  await populate(dir, ["a"]);
  const store = new MemoryConfigStore();
  // A settle period and a clock that never let a recently modified file load by its modification time.
  const source = new FileConfigSource({
    dir,
    store,
    defaultNamespace: "default",
    debounceMs: 5,
    checkMs: 60_000,
    settleMs: 60_000,
    wallClock: () => Date.now(),
  });
  await source.start();
  const names = () => store.list("ServiceEntry").map((r) => r.meta.name).sort().join(",");
  try {
    await replaceFile(`${dir}/a.yaml`, serviceEntry("b"));
    await waitFor(() => names() === "b", "the renamed file to load without settling");
    assert.deepEqual(source.status().settling, []);
    // Written to in place afterwards: that write may be half done, so it settles.
    await Deno.writeTextFile(`${dir}/a.yaml`, serviceEntry("c"));
    await waitFor(() => source.status().settling.length === 1, "the in-place write to settle");
    assert.equal(names(), "b");
  } finally {
    await source.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

const UNSHARE = tool("unshare", ["--version"], "util-linux");

Deno.test("scanConfigFiles skips an unreadable folder and lists the rest", needs(UNSHARE), async () => {
  const root = await Deno.makeTempDir({ prefix: "file_config_source_unreadable_" });
  try {
    await populate(`${root}/open`, ["a"]);
    await populate(`${root}/locked`, ["b"]);
    await Deno.chmod(`${root}/locked`, 0o000);
    // Root reads any folder, so the scan runs as an unprivileged user in a user namespace.
    const module = new URL("./config_files.ts", import.meta.url).href;
    const { code, stdout, stderr } = await new Deno.Command("unshare", {
      args: [
        "--user",
        "--map-user=65534",
        "--map-group=65534",
        Deno.execPath(),
        "eval",
        // The workspace config resolves the package names the module imports; npm packages come from node_modules, never fetched.
        "--config",
        fileURLToPath(new URL("../../deno.json", import.meta.url)),
        "--node-modules-dir=manual",
        `import { scanConfigFiles } from "${module}"; console.log(JSON.stringify(await scanConfigFiles("${root}")));`,
      ],
      env: { DENO_DIR: `${root}/deno_dir`, NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(code, 0, new TextDecoder().decode(stderr));
    const scan = JSON.parse(new TextDecoder().decode(stdout));
    assert.deepEqual(scan.files, [`${root}/open/a.yaml`]);
    assert.equal(scan.unreadable.length, 1);
    assert.equal(scan.unreadable[0].path, `${root}/locked`);
    assert.match(scan.unreadable[0].reason, /Permission denied/);
  } finally {
    await Deno.chmod(`${root}/locked`, 0o755);
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("FileConfigSource rejects a file over the size limit whole and keeps its last good version", async () => {
  const dir = await Deno.makeTempDir({ prefix: "file_config_source_size_" });
  await populate(dir, ["a"]);
  const store = new MemoryConfigStore();
  const logger = new RecordingLogger();
  const source = new FileConfigSource({
    dir,
    store,
    defaultNamespace: "default",
    logger,
    checkMs: 60_000,
    settleMs: 0,
    maxFileBytes: 4096,
  });
  await source.start();
  try {
    await Deno.writeTextFile(`${dir}/a.yaml`, serviceEntry("b") + `# ${"x".repeat(8192)}\n`);
    await source.reload();
    assert.equal(store.list("ServiceEntry").map((r) => r.meta.name).join(","), "a");
    const [rejected] = source.rejected();
    assert.match(rejected.errors[0], /a\.yaml:1: file is \d+ bytes, over the 4096-byte limit/);
    await source.reload();
    assert.equal(
      logger.matching("error", "a.yaml").length,
      1,
      "an unchanged oversized file is reported once",
    );
  } finally {
    await source.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
