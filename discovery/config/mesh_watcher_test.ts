import { symlink } from "@mesh/shared/testing/symlink";
import assert from "node:assert/strict";
import { defaultMeshConfig } from "@mesh/shared/config/mesh/mesh_config";
import { type MeshChangeEvent, MeshWatcher } from "./mesh_watcher.ts";
import { Metrics } from "@mesh/shared/metrics/metrics";

async function lostGauge(metrics: Metrics, source: string): Promise<number | undefined> {
  const { values } = await metrics.gauge("discovery_config_source_lost").get();
  return values.find((v) => v.labels.source === source)?.value;
}
import { RecordingLogger, replaceFile, waitFor } from "./_test_support.ts";

Deno.test("MeshWatcher uses the defaults for missing files and follows a live file", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "mesh_watcher_test_" });
  const meshFile = `${dir}/mesh`;
  const networksFile = `${dir}/meshNetworks`;
  const logger = new RecordingLogger();
  const events: MeshChangeEvent[] = [];
  const watcher = new MeshWatcher({ meshConfigFile: meshFile, networksFile, logger, debounceMs: 20 });
  watcher.onChange((e) => events.push(e));
  try {
    await watcher.start();

    await t.step("missing files mean the default mesh, logged at info once", async () => {
      assert.deepEqual(watcher.current(), defaultMeshConfig());
      assert.deepEqual(watcher.networks(), { networks: {} });
      await watcher.reload();
      assert.equal(
        logger.matching("info", `mesh config file ${meshFile} not found; using the default`).length,
        1,
      );
      assert.equal(logger.matching("info", `mesh networks file ${networksFile} not found`).length, 1);
      assert.deepEqual(events, []);
    });

    await t.step("a file that appears later is loaded and announced", async () => {
      await Deno.writeTextFile(meshFile, "accessLogFile: /dev/stdout\n");
      await waitFor(() => events.length === 1, "a mesh config change");
      assert.equal(events[0].which, "meshConfig");
      assert.equal(events[0].mesh.accessLogFile, "/dev/stdout");
      assert.equal(watcher.current().accessLogFile, "/dev/stdout");
      assert.equal(watcher.current().connectTimeout, defaultMeshConfig().connectTimeout);
    });

    await t.step(
      "a bad file keeps the last good config, its error logged once with file and line",
      async () => {
        await replaceFile(meshFile, "accessLogFile: /dev/stderr\nconnectTimeout: forever\n");
        await waitFor(() => watcher.status()[0].errors.length > 0, "the error to be seen");
        await watcher.reload();
        assert.equal(watcher.current().accessLogFile, "/dev/stdout");
        assert.equal(events.length, 1);
        const errors = logger.matching(
          "error",
          `invalid mesh config file ${meshFile}; keeping the last good`,
        );
        assert.equal(errors.length, 1);
        assert.match(errors[0].msg, new RegExp(`${meshFile}:2: connectTimeout: invalid duration "forever"`));
        assert.deepEqual(watcher.status()[0], {
          file: meshFile,
          loaded: true,
          errors: watcher.status()[0].errors,
          lost: false,
        });
      },
    );

    await t.step("a fixed file replaced by rename is loaded", async () => {
      await replaceFile(meshFile, "accessLogFile: /dev/stderr\nconnectTimeout: 2s\n");
      await waitFor(() => events.length === 2, "the second change");
      assert.equal(watcher.current().connectTimeout, 2_000_000_000n);
      assert.deepEqual(watcher.status()[0].errors, []);
    });

    await t.step("rewriting the same content announces nothing", async () => {
      await replaceFile(meshFile, "accessLogFile: /dev/stderr\nconnectTimeout: 2s\n");
      await replaceFile(
        meshFile,
        "# same config, new comment\naccessLogFile: /dev/stderr\nconnectTimeout: 2s\n",
      );
      await watcher.reload();
      // A probe: reads never overlap and changes are announced in order, so the next announcement being the
      // probe's shows that no read of the rewritten files announced anything before it.
      await replaceFile(meshFile, "accessLogFile: /dev/stderr\nconnectTimeout: 3s\n");
      await waitFor(() => events.length >= 3, "the probe's change");
      assert.equal(events.length, 3);
      assert.equal(events[2].mesh.connectTimeout, 3_000_000_000n);
    });

    await t.step("a file emptied after loading keeps the last good config", async () => {
      await replaceFile(meshFile, "");
      await waitFor(
        () => logger.matching("warn", `${meshFile} is empty`).length === 1,
        "the empty-file warning",
      );
      assert.equal(watcher.current().connectTimeout, 3_000_000_000n);
      assert.equal(events.length, 3);
      await replaceFile(meshFile, "accessLogFile: /dev/stderr\nconnectTimeout: 3s\n");
    });

    await t.step("the networks file is watched too", async () => {
      await Deno.writeTextFile(networksFile, "networks:\n  n1:\n    endpoints: [{fromCidr: 10.0.0.0/8}]\n");
      await waitFor(() => events.length === 4, "a networks change");
      assert.equal(events[3].which, "meshNetworks");
      assert.deepEqual(Object.keys(watcher.networks().networks), ["n1"]);
      assert.equal(events[3].mesh.connectTimeout, 3_000_000_000n);
    });
  } finally {
    await watcher.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("MeshWatcher follows an orchestrator volume's ..data link swap", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mesh_watcher_test_" });
  const watcher = new MeshWatcher({ meshConfigFile: `${dir}/mesh`, debounceMs: 20 });
  try {
    await Deno.mkdir(`${dir}/..v1`);
    await Deno.writeTextFile(`${dir}/..v1/mesh`, "rootNamespace: first\n");
    await symlink("..v1", `${dir}/..data`);
    await symlink("..data/mesh", `${dir}/mesh`);
    await watcher.start();
    assert.equal(watcher.current().rootNamespace, "first");

    await Deno.mkdir(`${dir}/..v2`);
    await Deno.writeTextFile(`${dir}/..v2/mesh`, "rootNamespace: second\n");
    await symlink("..v2", `${dir}/..data_tmp`);
    await Deno.rename(`${dir}/..data_tmp`, `${dir}/..data`);
    await waitFor(() => watcher.current().rootNamespace === "second", "the swapped config");
  } finally {
    await watcher.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("MeshWatcher starts watching once a missing directory appears", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mesh_watcher_test_" });
  const logger = new RecordingLogger();
  const watcher = new MeshWatcher({
    meshConfigFile: `${dir}/later/mesh`,
    logger,
    debounceMs: 20,
    dirPollMs: 20,
  });
  try {
    await watcher.start();
    assert.deepEqual(watcher.current(), defaultMeshConfig());
    await Deno.mkdir(`${dir}/later`);
    await Deno.writeTextFile(`${dir}/later/mesh`, "ingressClass: custom\n");
    await waitFor(() => watcher.current().ingressClass === "custom", "the config in the new directory");
    assert.equal(logger.matching("info", "not found; using the default mesh config").length, 1);
  } finally {
    await watcher.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("MeshWatcher without files serves the defaults and watches nothing", async () => {
  const watcher = new MeshWatcher({});
  await watcher.start();
  assert.deepEqual(watcher.current(), defaultMeshConfig());
  assert.deepEqual(watcher.status(), []);
  await watcher.stop();
});

Deno.test("MeshWatcher follows the mesh config when its folder is replaced, removed and recreated", async () => {
  const root = await Deno.makeTempDir({ prefix: "mesh_watcher_folder_" });
  await Deno.mkdir(`${root}/etc`);
  await Deno.writeTextFile(`${root}/etc/mesh`, "accessLogFile: /dev/stdout\n");
  const metrics = new Metrics("discovery", { version: "test", tag: "test" });
  const watcher = new MeshWatcher({
    meshConfigFile: `${root}/etc/mesh`,
    debounceMs: 20,
    dirPollMs: 30,
    metrics,
  });
  try {
    await watcher.start();
    assert.equal(await lostGauge(metrics, "meshConfig"), 0);
    assert.equal(watcher.current().accessLogFile, "/dev/stdout");
    await Deno.mkdir(`${root}/next`);
    await Deno.writeTextFile(`${root}/next/mesh`, "accessLogFile: /tmp/a\n");
    await Deno.rename(`${root}/etc`, `${root}/old`);
    await Deno.rename(`${root}/next`, `${root}/etc`);
    await waitFor(() => watcher.current().accessLogFile === "/tmp/a", "the replaced folder's file");
    await Deno.writeTextFile(`${root}/etc/mesh`, "accessLogFile: /tmp/b\n");
    await waitFor(() => watcher.current().accessLogFile === "/tmp/b", "an edit in the replaced folder");
    await Deno.remove(`${root}/etc`, { recursive: true });
    await waitFor(() => watcher.status()[0].lost, "the file to be lost");
    assert.equal(watcher.current().accessLogFile, "/tmp/b", "the last config stays");
    assert.equal(await lostGauge(metrics, "meshConfig"), 1);
    await Deno.mkdir(`${root}/etc`);
    await Deno.writeTextFile(`${root}/etc/mesh`, "accessLogFile: /tmp/c\n");
    await waitFor(() => watcher.current().accessLogFile === "/tmp/c", "the recreated file");
    assert.equal(watcher.status()[0].lost, false);
    assert.equal(await lostGauge(metrics, "meshConfig"), 0);
  } finally {
    await watcher.stop();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("MeshWatcher keeps its config when a FIFO appears beside or in place of its file", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mesh_watcher_fifo_" });
  const meshFile = `${dir}/mesh`;
  await Deno.writeTextFile(meshFile, "accessLogFile: /tmp/a\n");
  const logger = new RecordingLogger();
  const watcher = new MeshWatcher({ meshConfigFile: meshFile, logger, debounceMs: 20, dirPollMs: 30 });
  const mkfifo = async (path: string) => {
    const { code } = await new Deno.Command("sh", { args: ["-c", 'mkfifo "$1"', "sh", path] }).output();
    assert.equal(code, 0);
  };
  try {
    await watcher.start();
    await mkfifo(`${dir}/pipe`);
    await replaceFile(meshFile, "accessLogFile: /tmp/b\n");
    await waitFor(() => watcher.current().accessLogFile === "/tmp/b", "an edit after a FIFO beside the file");
    await Deno.remove(meshFile);
    await mkfifo(meshFile);
    await watcher.reload();
    assert.equal(watcher.current().accessLogFile, "/tmp/b", "the last config stays");
    assert.match(watcher.status()[0].errors.join(), /not a regular file/);
  } finally {
    await watcher.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
