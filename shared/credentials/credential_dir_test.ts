import assert from "node:assert/strict";
import { join } from "node:path";
import { RecordingLogger } from "../testing/recording_logger.ts";
import { makePluggedInCa } from "../testing/plugged_in_ca.ts";
import { symlink } from "../testing/symlink.ts";
import { CredentialDirectory, type CredentialDirectoryOptions } from "./credential_dir.ts";

const DAY = 24 * 3_600_000;
const ca = await makePluggedInCa(DAY);
const CERT = ca.files["ca-cert.pem"];
const KEY = ca.files["ca-key.pem"];
const ROOT = ca.files["root-cert.pem"];

async function withDir(
  layout: CredentialDirectoryOptions["layout"],
  body: (dir: string, creds: CredentialDirectory, changes: string[], log: RecordingLogger) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "mesh_credential_dir_" });
  const log = new RecordingLogger();
  const creds = new CredentialDirectory({ dir, layout, checkMs: 60_000, setting: "TEST_DIR", log });
  const changes: string[] = [];
  creds.onChange((key) => changes.push(key));
  try {
    await body(dir, creds, changes, log);
  } finally {
    creds.close();
    await Deno.remove(dir, { recursive: true });
  }
}

async function writeFolder(path: string, files: Record<string, string>): Promise<void> {
  await Deno.mkdir(path, { recursive: true });
  for (const [name, text] of Object.entries(files)) await Deno.writeTextFile(join(path, name), text);
}

Deno.test("CredentialDirectory serves one credential per folder, under either set of file names", async () => {
  await withDir("flat", async (dir, creds, changes) => {
    await writeFolder(join(dir, "shop-cert"), { "tls.crt": CERT, "tls.key": KEY, "ca.crt": ROOT });
    await writeFolder(join(dir, "api-cert"), { cert: CERT, key: KEY });
    await writeFolder(join(dir, "notes"), { "README.txt": "not a credential" });
    await creds.refresh();
    assert.deepEqual(creds.keys(), ["api-cert", "shop-cert"]);
    assert.equal(creds.get("shop-cert")?.caCertPem, ROOT);
    assert.equal(creds.get("api-cert")?.caCertPem, undefined);
    assert.deepEqual(changes.sort(), ["api-cert", "shop-cert"]);
    await creds.refresh();
    assert.equal(changes.length, 2, "an unchanged folder is not announced again");
  });
});

Deno.test("CredentialDirectory keys namespaced folders by namespace and name", async () => {
  await withDir("namespaced", async (dir, creds) => {
    await writeFolder(join(dir, "edge", "shop-cert"), { "tls.crt": CERT, "tls.key": KEY });
    await writeFolder(join(dir, "web", "shop-cert"), { "tls.crt": CERT, "tls.key": KEY });
    await creds.refresh();
    assert.deepEqual(creds.keys(), ["edge/shop-cert", "web/shop-cert"]);
  });
});

Deno.test("CredentialDirectory follows a mounted volume's ..data symbolic link when it is swapped", async () => {
  await withDir("flat", async (dir, creds, changes) => {
    const mount = join(dir, "shop-cert");
    await writeFolder(join(mount, "..2026_01"), { "tls.crt": CERT, "tls.key": KEY });
    await symlink("..2026_01", join(mount, "..data"));
    for (const name of ["tls.crt", "tls.key"]) await symlink(join("..data", name), join(mount, name));
    await creds.refresh();
    assert.equal(creds.get("shop-cert")?.certChainPem, CERT);
    const other = await makePluggedInCa(DAY);
    await writeFolder(join(mount, "..2026_02"), { "tls.crt": other.files["ca-cert.pem"], "tls.key": KEY });
    await symlink("..2026_02", join(mount, "..data_tmp"));
    await Deno.rename(join(mount, "..data_tmp"), join(mount, "..data"));
    await creds.refresh();
    assert.equal(creds.get("shop-cert")?.certChainPem, other.files["ca-cert.pem"]);
    assert.deepEqual(changes, ["shop-cert", "shop-cert"]);
  });
});

Deno.test("CredentialDirectory skips a bad folder alone, says so once, and keeps its last good credential", async () => {
  await withDir("flat", async (dir, creds, changes, log) => {
    await writeFolder(join(dir, "shop-cert"), { "tls.crt": CERT, "tls.key": KEY });
    await writeFolder(join(dir, "broken"), { "tls.crt": "not a certificate", "tls.key": KEY });
    await creds.refresh();
    assert.deepEqual(creds.keys(), ["shop-cert"]);
    await Deno.writeTextFile(join(dir, "shop-cert", "tls.crt"), CERT.slice(0, 100)); // caught half-written
    await creds.refresh();
    await creds.refresh();
    assert.equal(creds.get("shop-cert")?.certChainPem, CERT);
    const warnings = log.lines.filter((r) => r.level === "warn").map((r) => r.msg);
    assert.equal(warnings.length, 2, warnings.join("\n"));
    assert.match(warnings[0], /TEST_DIR: .*broken: certificate chain/);
    assert.match(warnings[1], /shop-cert: certificate chain.*keeping the last good credential/);
    await Deno.writeTextFile(join(dir, "broken", "tls.crt"), CERT);
    await creds.refresh();
    assert.deepEqual(creds.keys(), ["broken", "shop-cert"]);
    assert.deepEqual(changes, ["shop-cert", "broken"]);
  });
});

Deno.test("CredentialDirectory refuses files too large to be a certificate or key", async () => {
  await withDir("flat", async (dir, creds, _changes, log) => {
    await writeFolder(join(dir, "huge"), { "tls.crt": "x".repeat(2 * 1024 * 1024), "tls.key": KEY });
    await creds.refresh();
    assert.deepEqual(creds.keys(), []);
    assert.match(
      log.lines.at(-1)?.msg ?? "",
      /huge\/tls\.crt is 2097152 bytes; a certificate or key file is at most 1 MiB/,
    );
  });
});

Deno.test("CredentialDirectory drops removed folders, and everything when the directory is removed and made again", async () => {
  await withDir("flat", async (dir, creds, changes) => {
    await writeFolder(join(dir, "a"), { "tls.crt": CERT, "tls.key": KEY });
    await writeFolder(join(dir, "b"), { "tls.crt": CERT, "tls.key": KEY });
    await creds.refresh();
    await Deno.remove(join(dir, "a"), { recursive: true });
    await creds.refresh();
    assert.deepEqual(creds.keys(), ["b"]);
    await Deno.remove(dir, { recursive: true });
    await creds.refresh();
    assert.deepEqual(creds.keys(), []);
    await writeFolder(join(dir, "c"), { "tls.crt": CERT, "tls.key": KEY });
    await creds.refresh();
    assert.deepEqual(creds.keys(), ["c"]);
    assert.deepEqual(changes, ["a", "b", "a", "b", "c"]);
  });
});
