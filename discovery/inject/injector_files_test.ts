import assert from "node:assert/strict";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { InjectorFiles } from "./injector_files.ts";

const GOOD_CONFIG = "policy: enabled\ntemplates:\n  sidecar: |\n    spec: {}\n";

async function withFiles(test: (dir: string, files: InjectorFiles, log: RecordingLogger) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "inject_files_" });
  const log = new RecordingLogger();
  const files = new InjectorFiles({
    configFile: `${dir}/config`,
    valuesFile: `${dir}/values`,
    environment: {},
    mesh: () => ({ defaultConfig: {} }),
    logger: log,
    dirPollMs: 60_000,
  });
  try {
    await test(dir, files, log);
  } finally {
    await files.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("Injector files: nothing to inject with until both the config and the values have loaded", async () => {
  await withFiles(async (dir, files) => {
    await files.start();
    assert.equal(files.state(), undefined);
    await Deno.writeTextFile(`${dir}/config`, GOOD_CONFIG);
    await files.reload();
    assert.equal(files.state(), undefined);
    await Deno.writeTextFile(`${dir}/values`, '{"global": {"hub": "h"}}');
    await files.reload();
    assert.deepStrictEqual(files.state()?.values, { global: { hub: "h" } });
    assert.equal(files.state()?.config.policy, "enabled");
  });
});

Deno.test("Injector files: a bad config is refused with its reason and the last good one stays", async () => {
  await withFiles(async (dir, files, log) => {
    await Deno.writeTextFile(`${dir}/config`, GOOD_CONFIG);
    await Deno.writeTextFile(`${dir}/values`, "{}");
    await files.start();
    const good = files.state()?.config;
    assert.ok(good?.templates.sidecar);

    await Deno.writeTextFile(`${dir}/config`, "policy: enabled\ntemplates:\n  sidecar: '{{ nosuch }}'\n");
    await files.reload();
    assert.equal(files.state()?.config, good);
    assert.match(files.errors().join("; "), /template "sidecar".*unknown function "nosuch"/);
    assert.ok(log.lines.some((l) => JSON.stringify(l).includes("nosuch")), "the refusal is logged");

    await Deno.writeTextFile(`${dir}/values`, "[1, 2]");
    await files.reload();
    assert.deepStrictEqual(files.state()?.values, {});
    assert.match(files.errors().join("; "), /expected a mapping of chart values/);

    await Deno.writeTextFile(`${dir}/config`, GOOD_CONFIG.replace("enabled", "disabled"));
    await files.reload();
    assert.equal(files.state()?.config.policy, "disabled");
  });
});
