import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { selfSignedServingCert } from "@mesh/shared/pki/serving_certificate";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { timersOf } from "@mesh/shared/testing/fake_timers";
import { waitFor } from "@mesh/shared/testing/wait_for";
import { symlink } from "@mesh/shared/testing/symlink";
import type { ServingTls } from "./serving_tls.ts";
import { followServingTlsFiles } from "./serving_tls_files.ts";

/** A new serving certificate and key for loopback. */
async function pair(): Promise<{ cert: string; key: string }> {
  const made = await selfSignedServingCert(["localhost", "127.0.0.1"]);
  return { cert: made.certPem, key: made.keyPem };
}

/** Writes `text` to `path` as an orchestrator or a renewal tool does: whole, by a rename. */
async function replace(path: string, text: string): Promise<void> {
  await Deno.writeTextFile(`${path}.tmp`, text);
  await Deno.rename(`${path}.tmp`, path);
}

Deno.test("followServingTlsFiles serves a renewed pair once it loads, and keeps the last good one meanwhile", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "serving_tls_files_" });
  const clock = FakeTimers.createClock();
  const log = new RecordingLogger();
  const first = await pair();
  const certFile = `${dir}/tls.crt`;
  const keyFile = `${dir}/tls.key`;
  await Deno.writeTextFile(certFile, first.cert);
  await Deno.writeTextFile(keyFile, first.key);
  const changes: ServingTls[] = [];
  const files = followServingTlsFiles(
    {
      tlsCertFile: certFile,
      tlsKeyFile: keyFile,
      current: { ...first, source: "files" },
      log,
      timers: timersOf(clock),
    },
    (tls) => changes.push(tls),
  );
  try {
    await t.step("a renewal written in place is seen by the folder's watch", async () => {
      const second = await pair();
      await replace(keyFile, second.key);
      await replace(certFile, second.cert);
      // The watch's events bring a read forward; it waits for the files to settle on the clock.
      await waitFor(() => clock.countTimers() >= 2, "the watch to see the renewal");
      clock.tick(1_000);
      await waitFor(() => changes.length === 1, "the renewed pair");
      assert.equal(changes[0].cert, second.cert);
      assert.equal(changes[0].key, second.key);
    });
    await t.step(
      "a certificate beside another's key is skipped, logged once, and served once its key follows",
      async () => {
        const third = await pair();
        await replace(certFile, third.cert);
        await files.check();
        await files.check();
        assert.equal(changes.length, 1, "the mismatched pair is not served");
        assert.equal(log.matching("warn", "do not load").length, 1);
        await replace(keyFile, third.key);
        await files.check();
        assert.equal(changes.length, 2);
        assert.equal(changes[1].cert, third.cert);
      },
    );
    await t.step("the same text read again changes nothing", async () => {
      await files.check();
      assert.equal(changes.length, 2);
    });
  } finally {
    files.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("followServingTlsFiles follows a volume whose ..data link is swapped to a new folder", async () => {
  const dir = await Deno.makeTempDir({ prefix: "serving_tls_files_" });
  const log = new RecordingLogger();
  const first = await pair();
  const second = await pair();
  const clock = FakeTimers.createClock();
  for (const [folder, { cert, key }] of [["v1", first], ["v2", second]] as const) {
    await Deno.mkdir(`${dir}/${folder}`);
    await Deno.writeTextFile(`${dir}/${folder}/tls.crt`, cert);
    await Deno.writeTextFile(`${dir}/${folder}/tls.key`, key);
  }
  await symlink("v1", `${dir}/..data`);
  await symlink("..data/tls.crt", `${dir}/tls.crt`);
  await symlink("..data/tls.key", `${dir}/tls.key`);
  const changes: ServingTls[] = [];
  const files = followServingTlsFiles(
    {
      tlsCertFile: `${dir}/tls.crt`,
      tlsKeyFile: `${dir}/tls.key`,
      current: { ...first, source: "files" },
      log,
      timers: timersOf(clock),
    },
    (tls) => changes.push(tls),
  );
  try {
    await symlink("v2", `${dir}/..data_tmp`);
    await Deno.rename(`${dir}/..data_tmp`, `${dir}/..data`);
    await files.check();
    assert.equal(changes.length, 1);
    assert.equal(changes[0].cert, second.cert);
  } finally {
    files.close();
    await Deno.remove(dir, { recursive: true });
  }
});
