import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import { timersOf } from "@mesh/shared/testing/fake_timers";
import { symlink } from "@mesh/shared/testing/symlink";
import { type ConfigFs, denoConfigFs } from "./config_fs.ts";
import type { FileConfigSourceOptions } from "./file_config_source.ts";
import { startTestSource, virtualService, waitFor } from "./_test_support.ts";

/** Writes one VirtualService file per name into `dir`. */
async function populate(dir: string, names: readonly string[]): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  for (const name of names) {
    await Deno.writeTextFile(`${dir}/${name}.yaml`, virtualService(name, `${name}.shop`));
  }
}

async function metricValue(
  metrics: Metrics,
  type: "gauge" | "counter",
  name: string,
  labels: Record<string, string> = {},
): Promise<number | undefined> {
  const { values } = await metrics[type](name).get();
  return values.find((v) =>
    Object.entries({ source: "configDir", ...labels }).every(([k, l]) => v.labels[k] === l)
  )
    ?.value;
}

/** A started source over `dir` with short periods, and the names of the VirtualServices it serves. */
function startSource(dir: string, options: Partial<FileConfigSourceOptions> = {}) {
  return startTestSource(dir, "VirtualService", { checkMs: 50, settleMs: 0, ...options });
}

Deno.test("FileConfigSource reads a directory removed and made again within one check", async (t) => {
  const root = await Deno.makeTempDir({ prefix: "file_config_source_recreate_" });
  const dir = `${root}/config`;
  await populate(dir, ["a"]);
  const clock = FakeTimers.createClock();
  const { source, names } = await startSource(dir, { timers: timersOf(clock), checkMs: 1000 });
  // Moves the fake clock along while real file events arrive: a check runs every 20 ticks at most.
  const until = (condition: () => boolean, what: string) =>
    waitFor(() => {
      clock.tick(50);
      return condition();
    }, what);
  try {
    await t.step(
      "rm -rf, mkdir and copy at once: the new folder and later edits in it are read",
      async () => {
        // The new folder usually gets the old one's inode number back: only the removal tells them apart.
        await Deno.remove(dir, { recursive: true });
        await populate(dir, ["b"]);
        await until(() => names() === "b", "the recreated folder's files");
        await populate(dir, ["c"]);
        await until(() => names() === "b,c", "a file added to the recreated folder");
      },
    );

    await t.step("rm -rf and mkdir, files copied after a reload: they are read", async () => {
      // One file: a reload between two of the removals `rm -rf` makes would rightly serve what is left.
      await Deno.remove(`${dir}/c.yaml`);
      await until(() => names() === "b", "the removal of one file");
      await Deno.remove(dir, { recursive: true });
      await Deno.mkdir(dir);
      await until(() => source.status().heldEmpty, "a read of the recreated, empty folder");
      assert.equal(names(), "b", "an empty folder keeps the last config");
      await populate(dir, ["d"]);
      await until(() => names() === "d", "the files copied into the recreated folder");
      await until(() => source.status().state === "watching", "the recreated folder to be watched");
      assert.equal(source.status().heldEmpty, false);
    });
  } finally {
    await source.stop();
    clock.uninstall?.();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("FileConfigSource keeps the config of an emptied directory unless told to withdraw it", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "file_config_source_empty_" });
  await populate(dir, ["a", "b"]);
  const kept = await startSource(dir);
  try {
    await t.step("by default: kept until files are back, logged once, shown in a gauge", async () => {
      await Deno.remove(`${dir}/a.yaml`);
      await Deno.remove(`${dir}/b.yaml`);
      await waitFor(() => kept.source.status().heldEmpty, "the empty directory to be held");
      assert.equal(kept.names(), "a,b");
      assert.equal(await metricValue(kept.metrics, "gauge", "discovery_config_source_held_empty"), 1);
      assert.equal(kept.logger.matching("warn", "has no config file").length, 1);
      await populate(dir, ["c"]);
      await waitFor(() => kept.names() === "c", "the new file to replace the held config");
      assert.equal(await metricValue(kept.metrics, "gauge", "discovery_config_source_held_empty"), 0);
    });
  } finally {
    await kept.source.stop();
  }
  const withdrawn = await startSource(dir, { emptyWithdrawAfterMs: 100 });
  try {
    await t.step(
      "with MESHD_CONFIG_DIR_EMPTY_WITHDRAW_AFTER: withdrawn once empty that long, counted",
      async () => {
        await Deno.remove(`${dir}/c.yaml`);
        await waitFor(() => withdrawn.names() === "", "the empty directory to be withdrawn");
        assert.equal(
          await metricValue(withdrawn.metrics, "counter", "discovery_config_source_empty_withdrawals"),
          1,
        );
        assert.equal(withdrawn.logger.matching("warn", "withdrawing").length, 1);
      },
    );
  } finally {
    await withdrawn.source.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("FileConfigSource keeps the config of a folder it can no longer read", async () => {
  const dir = await Deno.makeTempDir({ prefix: "file_config_source_unreadable_folder_" });
  await populate(dir, ["a"]);
  await populate(`${dir}/extra`, ["b", "c"]);
  let locked = false;
  // As root, `chmod 000` does not stop a read: the folder's read fails through the injected file system.
  const fs: ConfigFs = {
    ...denoConfigFs,
    readDir: (path) => {
      if (locked && path === `${dir}/extra`) {
        throw new Deno.errors.PermissionDenied(`Permission denied (os error 13): readdir '${path}'`);
      }
      return denoConfigFs.readDir(path);
    },
  };
  const { source, names, metrics, logger } = await startSource(dir, { fs, checkMs: 60_000 });
  try {
    assert.equal(names(), "a,b,c");
    locked = true;
    await source.reload();
    assert.equal(names(), "a,b,c", "the unreadable folder's resources stay");
    assert.deepEqual(source.status().unreadable, [
      `${dir}/extra: Permission denied (os error 13): readdir '${dir}/extra'`,
    ]);
    assert.equal(await metricValue(metrics, "gauge", "discovery_config_source_unreadable_paths"), 1);
    assert.equal(logger.matching("error", "keeping the config last read from it").length, 1);
    locked = false;
    await Deno.remove(`${dir}/extra/c.yaml`);
    await source.reload();
    assert.equal(names(), "a,b", "readable again: read as it is now");
    assert.deepEqual(source.status().unreadable, []);
  } finally {
    await source.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

async function mkfifo(path: string): Promise<void> {
  const { code, stderr } = await new Deno.Command("sh", { args: ["-c", 'mkfifo "$1"', "sh", path] }).output();
  assert.equal(code, 0, new TextDecoder().decode(stderr));
}

Deno.test("FileConfigSource skips a FIFO and keeps reloading", async () => {
  const dir = await Deno.makeTempDir({ prefix: "file_config_source_fifo_" });
  await populate(dir, ["a"]);
  const { source, names, metrics } = await startSource(dir);
  try {
    await mkfifo(`${dir}/x.yaml`);
    await populate(dir, ["b"]);
    await waitFor(() => names() === "a,b", "a file written after the FIFO");
    await waitFor(() => source.status().skipped.length > 0, "the FIFO to be reported");
    assert.deepEqual(source.status().skipped, [`${dir}/x.yaml: a FIFO, not a regular file`]);
    assert.equal(
      await metricValue(metrics, "gauge", "discovery_config_source_skipped_paths", { reason: "not_regular" }),
      1,
    );
    await Deno.remove(`${dir}/x.yaml`);
    await populate(dir, ["c"]);
    await waitFor(() => names() === "a,b,c", "a file written after the FIFO was removed");
  } finally {
    await source.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("FileConfigSource refuses links out of its directory and follows those inside it", async (t) => {
  const root = await Deno.makeTempDir({ prefix: "file_config_source_links_" });
  const dir = `${root}/config`;
  const hash = "H".repeat(86);
  const secret = `root:$6$saltsalt$${hash}:19000:0:99999:7:::`;
  await Deno.mkdir(dir);
  await Deno.writeTextFile(`${root}/shadow`, `${secret}\n`);
  // An orchestrator volume: x.yaml -> ..data/x.yaml, ..data -> ..2024_01, all inside the directory.
  await populate(`${dir}/..2024_01`, ["a"]);
  await symlink("..2024_01", `${dir}/..data`);
  await symlink("..data/a.yaml", `${dir}/a.yaml`);
  await symlink(`${root}/shadow`, `${dir}/zz.yaml`);
  const { source, names, logger } = await startSource(dir, { checkMs: 60_000 });
  try {
    await t.step("a link to a file outside is not read, and reported", () => {
      assert.equal(names(), "a");
      assert.deepEqual(source.status().skipped, [
        `${dir}/zz.yaml: a link to "${root}/shadow", outside the directory`,
      ]);
      assert.deepEqual(source.rejected(), []);
      assert.ok(
        logger.lines.every((line) => !JSON.stringify(line).includes("$6$")),
        "nothing of the file logged",
      );
    });
  } finally {
    await source.stop();
  }
  const following = await startSource(dir, { checkMs: 60_000, followExternalLinks: true });
  try {
    await t.step("allowed: read, and its errors quote no more than a short excerpt", () => {
      const [rejected] = following.source.rejected();
      assert.equal(rejected.file, `${dir}/zz.yaml`);
      const errors = rejected.errors.join("\n");
      assert.ok(!errors.includes(hash.slice(0, 20)), errors);
      assert.ok(!errors.includes(":19000"), errors);
    });
  } finally {
    await following.source.stop();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("FileConfigSource follows a --configDir link swapped to another folder", async () => {
  const root = await Deno.makeTempDir({ prefix: "file_config_source_root_link_" });
  await populate(`${root}/v1`, ["a"]);
  await populate(`${root}/v2`, ["b"]);
  await symlink("v1", `${root}/current`);
  const { source, names } = await startSource(`${root}/current`);
  try {
    assert.equal(names(), "a");
    // Swapped atomically, as deploy tools do: a new link renamed over the old one.
    await symlink("v2", `${root}/next`);
    await Deno.rename(`${root}/next`, `${root}/current`);
    await waitFor(() => names() === "b", "the folder the link names now");
    await populate(`${root}/v2`, ["c"]);
    await waitFor(() => names() === "b,c", "an edit in the swapped-in folder");
    assert.deepEqual(source.status().skipped, []);
  } finally {
    await source.stop();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("FileConfigSource withdraws a removed file only once it has stayed removed for the settle period", async () => {
  const dir = await Deno.makeTempDir({ prefix: "file_config_source_removal_" });
  await populate(dir, ["a", "b"]);
  const clock = FakeTimers.createClock();
  const { source, names } = await startSource(dir, {
    timers: timersOf(clock),
    checkMs: 60_000,
    settleMs: 200,
  });
  try {
    // What `rm -rf` of a large tree looks like midway: some files gone, the folder still there.
    await Deno.remove(`${dir}/a.yaml`);
    await source.reload();
    assert.equal(names(), "a,b", "a file just removed is still served");
    clock.tick(100);
    await source.reload();
    assert.equal(names(), "a,b");
    clock.tick(100);
    await waitFor(() => names() === "b", "the removal to be applied after the settle period");
  } finally {
    await source.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("FileConfigSource keeps reloading after a FIFO appears and goes in a subfolder", async () => {
  const dir = await Deno.makeTempDir({ prefix: "file_config_source_fifo_sub_" });
  await populate(`${dir}/shop`, ["a"]);
  // Folders changed before the watch was placed: only later changes are expected to have events.
  const past = new Date(Date.now() - 60_000);
  for (const folder of [dir, `${dir}/shop`]) await Deno.utime(folder, past, past);
  const { source, names } = await startSource(dir);
  try {
    await mkfifo(`${dir}/shop/x.yaml`);
    await populate(`${dir}/shop`, ["b"]);
    await waitFor(() => names() === "a,b", "a file written in the subfolder after the FIFO");
    await Deno.remove(`${dir}/shop/x.yaml`);
    await populate(`${dir}/shop`, ["c"]);
    await waitFor(() => names() === "a,b,c", "a file written in the subfolder after the FIFO went");
  } finally {
    await source.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
